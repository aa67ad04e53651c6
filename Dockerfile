# Multi-stage build of the idforge binary: a static, cgo-free executable
# on a minimal base, running as a non-root user.
#
#   docker build -t idforge .
#   docker run -p 8080:8080 -e IDFORGE_TOKEN=$(openssl rand -hex 24) -v idforge-data:/data idforge
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# scripts/release.sh prints the build command with the release's values.
ARG VERSION=dev
ARG COMMIT=unknown
ARG DATE=unknown
# The release build (README, "Packaging"): no symbol table or DWARF
# (-s -w), no local paths (-trimpath), and grpc-go's grpcnotrace tag,
# which drops golang.org/x/net/trace. That package pulls in html/template,
# whose reflective method calls keep every exported method of every type
# in the binary (go-redis alone has thousands); idforge never serves its
# /debug/requests pages. 35.0 MB -> 25.5 MB, see BENCHMARKS.md.
RUN CGO_ENABLED=0 go build -tags grpcnotrace -trimpath -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT} -X main.date=${DATE}" -o /out/idforge ./cmd/idforge
# The data directory, owned by the nonroot user (65532) the image runs
# as: a fresh volume is initialised from it, so the node can write there.
RUN mkdir -p /out/data && chown 65532:65532 /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/idforge /usr/local/bin/idforge
COPY --from=build --chown=65532:65532 /out/data /data
# The data directory holds the node's lock, worker ID, time fence and, by
# default, its SQLite database: mount a volume to keep it.
VOLUME ["/data"]
EXPOSE 8080 9090
USER nonroot:nonroot
ENV IDFORGE_DATA=/data IDFORGE_HTTP=0.0.0.0:8080
# Binding 0.0.0.0 needs a token (IDFORGE_TOKEN, or [auth] in a config file).
ENTRYPOINT ["/usr/local/bin/idforge"]
CMD ["serve"]
