package controller

import (
	"crypto/sha256"
	"encoding/hex"

	"k8s.io/apimachinery/pkg/labels"
)

// LeaderElectionID returns the name of the leader election Lease of the
// managers of one shard: each shard elects its own leader.
func LeaderElectionID(shard labels.Selector) string {
	const id = "mysql-operator.database.example.com"
	if shard.Empty() {
		return id
	}
	sum := sha256.Sum256([]byte(shard.String()))
	return "mysql-operator-" + hex.EncodeToString(sum[:5]) + ".database.example.com"
}
