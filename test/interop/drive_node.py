"""Drives a tailswarm node from python3-grpcio (an independent gRPC implementation).

No generated stubs: requests are hand-encoded protobuf, replies decoded by a tiny wire-format reader.
Usage: drive_node.py HOST:PORT  — prints one JSON object with the results.
"""
import json
import struct
import sys

import grpc


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field_bytes(num, data):
    return varint((num << 3) | 2) + varint(len(data)) + data


def field_varint(num, value):
    return varint(num << 3) + varint(value)


def decode(buf):
    """Protobuf wire format -> {field number: [values]} (varints as int, length-delimited as bytes)."""
    out, i = {}, 0
    while i < len(buf):
        key, shift = 0, 0
        while True:
            b = buf[i]
            i += 1
            key |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        num, wire = key >> 3, key & 7
        if wire == 0:
            val, shift = 0, 0
            while True:
                b = buf[i]
                i += 1
                val |= (b & 0x7F) << shift
                shift += 7
                if not b & 0x80:
                    break
        elif wire == 1:
            val = struct.unpack("<d", buf[i : i + 8])[0]
            i += 8
        elif wire == 2:
            n, shift = 0, 0
            while True:
                b = buf[i]
                i += 1
                n |= (b & 0x7F) << shift
                shift += 7
                if not b & 0x80:
                    break
            val = buf[i : i + n]
            i += n
        elif wire == 5:
            val = struct.unpack("<f", buf[i : i + 4])[0]
            i += 4
        else:
            raise ValueError("unsupported wire type %d" % wire)
        out.setdefault(num, []).append(val)
    return out


def coordinate_request(kind, payload, decision=None, options=None):
    msg = field_bytes(1, kind.encode()) + field_bytes(2, json.dumps(payload).encode())
    if decision:
        msg += field_bytes(6, decision.encode())
    if options is not None:
        msg += field_bytes(7, json.dumps(options).encode())
    return msg


def main():
    address = sys.argv[1]
    identity = lambda b: b  # noqa: E731
    result = {}
    with grpc.insecure_channel(address) as channel:
        check = channel.unary_unary(
            "/grpc.health.v1.Health/Check", request_serializer=identity, response_deserializer=identity
        )
        reply = decode(check(b"", timeout=5))
        result["health"] = {1: "SERVING", 2: "NOT_SERVING"}.get(reply.get(1, [0])[0], "UNKNOWN")

        coordinate = channel.unary_unary(
            "/tailswarm.v1.Swarm/Coordinate", request_serializer=identity, response_deserializer=identity
        )
        options = {"options": ["ship", "hold"], "prior": "hold"}
        reply = decode(coordinate(coordinate_request("vote", {"question": "ship?"}, "quorum-vote", options), timeout=10))
        result["coordinate"] = {
            "action": json.loads(reply[1][0].decode()) if 1 in reply else None,
            "mode": reply.get(2, [b""])[0].decode(),
            "committed": reply.get(6, [0])[0],
            "node_id": reply.get(16, [b""])[0].decode(),
        }

        try:
            coordinate(coordinate_request("slow", {"question": "late?"}, "quorum-vote", options), timeout=0.3)
            result["slow"] = "OK"
        except grpc.RpcError as err:
            result["slow"] = err.code().name
            result["slow_details"] = err.details()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
