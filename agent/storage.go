package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/example/mysql-operator/backup"
	"github.com/example/mysql-operator/objstore"
)

// loadStorageConfig reads the JSON file name of a storage directory into
// v, and the credentials beside it into storage (a field of v).
func loadStorageConfig(dir, name string, v any, storage *objstore.Config) error {
	if dir == "" {
		return errors.New("no storage is configured")
	}
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return fmt.Errorf("read the storage config: %w", err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("read the storage config %s: %w", name, err)
	}
	return objstore.LoadCredentials(dir, storage)
}

// loadBackupConfig reads the MySQL's backup config.
func (c Config) loadBackupConfig() (backup.PodConfig, error) {
	var cfg backup.PodConfig
	err := loadStorageConfig(c.BackupDir, backup.ConfigFile, &cfg, &cfg.Storage)
	return cfg, err
}

// openStore returns the store of cfg once its bucket answers.
func openStore(ctx context.Context, cfg objstore.Config) (*objstore.Store, error) {
	s, err := objstore.New(cfg)
	if err != nil {
		return nil, err
	}
	return s, s.Check(ctx)
}
