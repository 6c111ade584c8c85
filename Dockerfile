# Builds the manager and the agent the database pods copy from this same
# image: static binaries (CGO off) in a distroless, non-root image. `make
# build` compiles them with the same flags, which is how CI checks it here.
FROM golang:1.26 AS builder
WORKDIR /workspace
COPY go.mod go.sum ./
RUN go mod download
COPY agent/ agent/
COPY api/ api/
COPY applyset/ applyset/
COPY controller/ controller/
COPY dbop/ dbop/
COPY topology/ topology/
COPY cmd/ cmd/
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags='-s -w' -o manager ./cmd/manager && \
    CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags='-s -w' -o agent ./cmd/agent

FROM gcr.io/distroless/static:nonroot
WORKDIR /
COPY --from=builder /workspace/manager /workspace/agent ./
USER 65532:65532
ENTRYPOINT ["/manager"]
