# Prometheus with no image registry: Debian's prometheus package (this machine's, installed by
# scripts/ensure-prometheus.sh) on the offline base, shaped like prom/prometheus where the generated
# overlay relies on it: ENTRYPOINT /bin/prometheus, storage in /prometheus, user nobody, port 9090.
# docker/observability-images.sh builds it (context: the binary and Debian's classic web UI files).
ARG BASE_IMAGE=tailswarm/node-base:24-offline
FROM ${BASE_IMAGE}
COPY prometheus /bin/prometheus
COPY web /usr/share/prometheus/web
RUN mkdir -p /prometheus /etc/prometheus && chown nobody:nogroup /prometheus
USER nobody
WORKDIR /prometheus
EXPOSE 9090
ENTRYPOINT ["/bin/prometheus"]
CMD ["--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.path=/prometheus"]
