# Builds the manager: a static binary (CGO off) in a distroless, non-root image.
# `make build` compiles it with the same flags, which is how CI checks it here.
FROM golang:1.26 AS builder
WORKDIR /workspace
COPY go.mod go.sum ./
RUN go mod download
COPY api/ api/
COPY applyset/ applyset/
COPY controller/ controller/
COPY cmd/manager/ cmd/manager/
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags='-s -w' -o manager ./cmd/manager

FROM gcr.io/distroless/static:nonroot
WORKDIR /
COPY --from=builder /workspace/manager .
USER 65532:65532
ENTRYPOINT ["/manager"]
