"""Drives a tailswarm node from python3-grpcio (an independent gRPC implementation).

Uses stubs generated from proto/ (and grpc-health-check's health.proto) by protoc and the gRPC Python
plugin; the test generates them into STUBS_DIR before it runs this.
Usage: drive_node.py STUBS_DIR HOST:PORT  — prints one JSON object with the results.
"""
import json
import sys

sys.path.insert(0, sys.argv[1])

import grpc  # noqa: E402
from health.v1 import health_pb2, health_pb2_grpc  # noqa: E402
from tailswarm.v1 import swarm_pb2, swarm_pb2_grpc  # noqa: E402


def coordinate_request(kind, payload, decision, options):
    return swarm_pb2.CoordinateRequest(
        kind=kind,
        payload=json.dumps(payload).encode(),
        decision=decision,
        options=json.dumps(options).encode(),
    )


def main():
    address = sys.argv[2]
    result = {}
    with grpc.insecure_channel(address) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        reply = health.Check(health_pb2.HealthCheckRequest(), timeout=5)
        result["health"] = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)

        swarm = swarm_pb2_grpc.SwarmStub(channel)
        options = {"options": ["ship", "hold"], "prior": "hold"}
        reply = swarm.Coordinate(coordinate_request("vote", {"question": "ship?"}, "quorum-vote", options), timeout=10)
        result["coordinate"] = {
            "action": json.loads(reply.action.decode()) if reply.action else None,
            "mode": reply.mode,
            "committed": reply.committed,
            "node_id": reply.node_id,
            # proto3 `optional`: presence is on the wire, not a default
            "info_gain_set": reply.HasField("info_gain_per_committed"),
            "branches": [{"peer": b.peer, "outcome": b.outcome} for b in reply.branches],
        }

        try:
            reply = swarm.Coordinate(
                coordinate_request("slow", {"question": "late?"}, "quorum-vote", options), timeout=0.3
            )
            result["slow"] = "OK"
            result["slow_no_answer"] = reply.no_answer
        except grpc.RpcError as err:
            result["slow"] = err.code().name
            result["slow_details"] = err.details()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
