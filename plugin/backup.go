package plugin

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
)

// backupCommand is `kubectl mysql backup NAME [--wait]`.
func (o *options) backupCommand() *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "backup NAME",
		Short: "Take a backup of a MySQL now: a MySQLBackup, to the storage its spec.backup names",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.backup(cmd.Context(), args[0], timeout)
		},
	}
	cmd.Flags().DurationVar(&timeout, "wait", 0, "how long to wait for the backup to complete; 0 returns at once")
	return cmd
}

// backup creates a MySQLBackup of name and, with a timeout, waits for its end.
func (o *options) backup(ctx context.Context, name string, timeout time.Duration) error {
	m, err := o.mysql(ctx, name)
	if err != nil {
		return err
	}
	if m.Spec.Backup == nil {
		return fmt.Errorf("MySQL %s has no spec.backup: it names the storage backups go to", name)
	}
	b := &databasev1.MySQLBackup{ObjectMeta: metav1.ObjectMeta{GenerateName: name + "-manual-", Namespace: m.Namespace},
		Spec: databasev1.MySQLBackupSpec{MySQLRef: databasev1.MySQLReference{Name: name}}}
	if err := o.client.Create(ctx, b); err != nil {
		return fmt.Errorf("create a MySQLBackup: %w", err)
	}
	fmt.Fprintf(o.streams.Out, "mysqlbackup/%s created\n", b.Name)
	if timeout == 0 {
		return nil
	}
	err = wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		if err := o.client.Get(ctx, client.ObjectKeyFromObject(b), b); err != nil {
			return false, err
		}
		return b.Status.Phase == databasev1.BackupComplete || b.Status.Phase == databasev1.BackupFailed, nil
	})
	switch {
	case err != nil:
		return fmt.Errorf("mysqlbackup/%s not done within %s: %w", b.Name, timeout, err)
	case b.Status.Phase == databasev1.BackupFailed:
		return fmt.Errorf("mysqlbackup/%s failed: %s", b.Name, b.Status.Message)
	}
	fmt.Fprintf(o.streams.Out, "mysqlbackup/%s complete: %s from %s in %s, GTID %s\n", b.Name, b.Status.Size, b.Status.Instance, b.Status.Duration, b.Status.GTID)
	return nil
}
