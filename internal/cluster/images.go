package cluster

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/example/mysql-operator/internal/testenv"
)

// Images of the real node. No registry is reachable: each is built here
// and imported into the node's containerd, under a localhost/ name so that
// nobody mistakes it for an image of a registry.
const (
	// PauseImage is the sandbox image, pause compiled from the kubernetes
	// module's source (make node).
	PauseImage = "localhost/pause:3.10"
	// MariaDBImage is Debian bookworm with MariaDB 10.11 (make node), the
	// database image of the real node's MySQLs of engine MariaDB.
	MariaDBImage = "localhost/mariadb:10.11"
	// AgentImage holds the operator's agent binary, built from cmd/agent.
	AgentImage = "localhost/mysql-operator-agent:dev"
	// ManagerImage holds the operator's manager binary, built from
	// cmd/manager, for the manager run as a Deployment (the Helm test).
	ManagerImage = "localhost/mysql-operator:dev"
)

// image is one image to import: its name, the root filesystem layer and
// the process config.
type image struct {
	name string
	// layer returns the path of a tar of the root filesystem.
	layer func(ctx context.Context, dir string) (string, error)
	// entrypoint and env of the image config.
	entrypoint []string
}

// nodeImages are the images every real node has.
func (c *Cluster) nodeImages() []image {
	return []image{
		{name: PauseImage, entrypoint: []string{"/pause"}, layer: func(_ context.Context, dir string) (string, error) {
			return singleFileLayer(filepath.Join(dir, "pause.tar"), filepath.Join(c.opts.Bin, "pause"), "pause")
		}},
		{name: MariaDBImage, layer: func(context.Context, string) (string, error) {
			path := filepath.Join(c.opts.Bin, "images", "mariadb-10.11-rootfs.tar")
			if _, err := os.Stat(path); err != nil {
				return "", fmt.Errorf("the MariaDB image's root filesystem is missing (run `make node`): %w", err)
			}
			return path, nil
		}},
		{name: AgentImage, entrypoint: []string{"/agent"}, layer: func(ctx context.Context, dir string) (string, error) {
			bin, err := BuildAgent(ctx, dir)
			if err != nil {
				return "", err
			}
			return singleFileLayer(filepath.Join(dir, "agent.tar"), bin, "agent")
		}},
		{name: ManagerImage, entrypoint: []string{"/manager"}, layer: func(ctx context.Context, dir string) (string, error) {
			bin, err := buildCommand(ctx, dir, "manager")
			if err != nil {
				return "", err
			}
			return singleFileLayer(filepath.Join(dir, "manager.tar"), bin, "manager")
		}},
	}
}

// importImages builds an OCI archive of every node image and imports it
// into containerd, unpacked for the kubelet.
func (c *Cluster) importImages(ctx context.Context) error {
	dir := c.nodeDir("images")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for _, img := range c.nodeImages() {
		begin := time.Now()
		layer, err := img.layer(ctx, dir)
		if err != nil {
			return fmt.Errorf("image %s: %w", img.name, err)
		}
		archive := filepath.Join(dir, strings.NewReplacer("/", "_", ":", "_").Replace(img.name)+".oci.tar")
		if err := writeOCIArchive(archive, img.name, layer, img.entrypoint); err != nil {
			return fmt.Errorf("image %s: %w", img.name, err)
		}
		if err := c.ctr("images", "import", "--no-unpack=false", archive); err != nil {
			return fmt.Errorf("import %s: %w", img.name, err)
		}
		_ = os.Remove(archive)
		fmt.Fprintf(c.opts.Progress, "    image %s imported in %s\n", img.name, time.Since(begin).Round(10*time.Millisecond))
	}
	return nil
}

// BuildAgent compiles cmd/agent statically into dir and returns its path.
func BuildAgent(ctx context.Context, dir string) (string, error) {
	return buildCommand(ctx, dir, "agent")
}

// singleFileLayer writes a layer tar holding one executable file at /name.
func singleFileLayer(path, src, name string) (string, error) {
	data, err := os.ReadFile(src)
	if err != nil {
		return "", err
	}
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	tw := tar.NewWriter(f)
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(data)), ModTime: time.Unix(0, 0)}); err != nil {
		return "", err
	}
	if _, err := tw.Write(data); err != nil {
		return "", err
	}
	return path, tw.Close()
}

// descriptor is an OCI content descriptor.
type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// blob is one blob of an OCI archive: its bytes, or a file.
type blob struct {
	desc descriptor
	data []byte
	path string
}

// writeOCIArchive writes an OCI image layout archive of one image: one
// uncompressed layer, a config with the entrypoint, a manifest, and an
// index naming it for containerd.
func writeOCIArchive(path, name, layerPath string, entrypoint []string) error {
	layerDigest, layerSize, err := fileDigest(layerPath)
	if err != nil {
		return err
	}
	layer := blob{desc: descriptor{MediaType: "application/vnd.oci.image.layer.v1.tar", Digest: layerDigest, Size: layerSize}, path: layerPath}
	config := jsonBlob("application/vnd.oci.image.config.v1+json", map[string]any{
		"architecture": "amd64", "os": "linux",
		"config": map[string]any{"Env": []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}, "Entrypoint": entrypoint},
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{layerDigest}},
	})
	manifest := jsonBlob("application/vnd.oci.image.manifest.v1+json", map[string]any{
		"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
		"config": config.desc, "layers": []descriptor{layer.desc},
	})
	manifest.desc.Annotations = map[string]string{"io.containerd.image.name": name, "org.opencontainers.image.ref.name": name[strings.LastIndex(name, ":")+1:]}
	index := map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": []descriptor{manifest.desc}}
	return writeTar(path, map[string]any{"oci-layout": map[string]string{"imageLayoutVersion": "1.0.0"}, "index.json": index},
		[]blob{config, manifest, layer})
}

// jsonBlob makes a blob of a JSON document.
func jsonBlob(mediaType string, v any) blob {
	data, _ := json.Marshal(v) // maps of strings always marshal
	sum := sha256.Sum256(data)
	return blob{desc: descriptor{MediaType: mediaType, Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: int64(len(data))}, data: data}
}

// fileDigest returns the sha256 digest and size of a file.
func fileDigest(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), n, err
}

// writeTar writes the documents as JSON files and the blobs under blobs/sha256/.
func writeTar(path string, docs map[string]any, blobs []blob) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	tw := tar.NewWriter(f)
	for name, v := range docs {
		data, _ := json.Marshal(v)
		if err := writeEntry(tw, name, data, nil, int64(len(data))); err != nil {
			return err
		}
	}
	for _, b := range blobs {
		name := "blobs/sha256/" + strings.TrimPrefix(b.desc.Digest, "sha256:")
		var r io.Reader
		if b.path != "" {
			src, err := os.Open(b.path)
			if err != nil {
				return err
			}
			defer src.Close()
			r = src
		}
		if err := writeEntry(tw, name, b.data, r, b.desc.Size); err != nil {
			return err
		}
	}
	return tw.Close()
}

// writeEntry writes one regular file to tw, from data or from r.
func writeEntry(tw *tar.Writer, name string, data []byte, r io.Reader, size int64) error {
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: size, ModTime: time.Unix(0, 0)}); err != nil {
		return err
	}
	if r == nil {
		_, err := tw.Write(data)
		return err
	}
	_, err := io.Copy(tw, r)
	return err
}

// buildCommand compiles ./cmd/<name> of the repository statically, with
// the flags of the Dockerfile, into dir.
func buildCommand(ctx context.Context, dir, name string) (string, error) {
	root, err := testenv.RepoRoot()
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, name)
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, "./cmd/"+name)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Dir = root
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/%s: %w\n%s", name, err, msg)
	}
	return out, nil
}
