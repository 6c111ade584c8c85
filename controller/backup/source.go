package backup

import (
	"cmp"
	"fmt"
	"slices"

	databasev1 "github.com/example/mysql-operator/api/v1"
)

// pickSource is the instance a backup of m is taken on, by spec.backup.source
// and what status last saw: the ready replica with the least lag (a MySQL of
// one instance uses its primary), or the ready primary. It is "" when none
// can, with why.
func pickSource(m *databasev1.MySQL) (string, string) {
	var primary string
	var replicas []databasev1.InstanceStatus
	for _, in := range m.Status.Instances {
		switch {
		case !in.Ready:
		case in.Role == databasev1.RolePrimary && in.Name == m.Status.CurrentPrimary:
			primary = in.Name
		case in.Role == databasev1.RoleReplica:
			replicas = append(replicas, in)
		}
	}
	if m.Spec.Backup.Source == databasev1.BackupFromPrimary || m.Spec.Replicas == 1 {
		if primary == "" {
			return "", "waiting for a ready primary to take the backup on"
		}
		return primary, ""
	}
	if len(replicas) == 0 {
		return "", fmt.Sprintf("waiting for a ready replica to take the backup on (spec.backup.source Replica spares the primary): %d of %d instances are ready",
			readyCount(m), len(m.Status.Instances))
	}
	best := slices.MinFunc(replicas, func(a, b databasev1.InstanceStatus) int {
		return cmp.Or(cmp.Compare(lag(a), lag(b)), cmp.Compare(a.Name, b.Name))
	})
	return best.Name, ""
}

// lag is a replica's lag, 0 when unknown.
func lag(in databasev1.InstanceStatus) int64 {
	if in.LagSeconds == nil {
		return 0
	}
	return *in.LagSeconds
}

// readyCount is how many instances status shows ready.
func readyCount(m *databasev1.MySQL) int {
	n := 0
	for _, in := range m.Status.Instances {
		if in.Ready {
			n++
		}
	}
	return n
}
