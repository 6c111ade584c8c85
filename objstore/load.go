package objstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Files of a storage directory, as the operator mounts one into a pod
// beside the config (package backup's): the credentials and the CA from
// the Secrets the spec names. The keys of the credentials Secret are the
// ones every S3 tool reads.
const (
	// AccessKeyIDFile holds the access key ID.
	AccessKeyIDFile = "AWS_ACCESS_KEY_ID"
	// SecretAccessKeyFile holds the secret access key.
	SecretAccessKeyFile = "AWS_SECRET_ACCESS_KEY"
	// CAFile holds the PEM bundle of Config.CA; it may be absent.
	CAFile = "ca.crt"
)

// LoadCredentials reads the credentials and the CA of a storage directory
// into cfg. The files are read at each call: the kubelet updates a mounted
// Secret in place, so that rotated credentials are used without a restart.
func LoadCredentials(dir string, cfg *Config) error {
	for _, f := range []struct {
		name string
		to   *string
	}{{AccessKeyIDFile, &cfg.AccessKeyID}, {SecretAccessKeyFile, &cfg.SecretAccessKey}} {
		v, err := os.ReadFile(filepath.Join(dir, f.name))
		if err != nil {
			return fmt.Errorf("read the storage credentials: the Secret has no key %s: %w", f.name, err)
		}
		*f.to = strings.TrimSpace(string(v))
	}
	ca, err := os.ReadFile(filepath.Join(dir, CAFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("read the storage CA: %w", err)
	}
	cfg.CA = ca
	return nil
}
