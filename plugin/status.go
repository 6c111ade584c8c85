package plugin

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
)

// statusCommand is `kubectl mysql status NAME`.
func (o *options) statusCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "status NAME",
		Short: "Show a MySQL's topology: each instance's role, health, GTID position and lag; the last failover, switchover and backup",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := o.mysql(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			last, err := o.lastBackup(cmd.Context(), m)
			if err != nil {
				return err
			}
			return renderStatus(o.streams.Out, m, last, time.Now())
		},
	}
}

// lastBackup is m's backup that completed last, nil when none did.
func (o *options) lastBackup(ctx context.Context, m *databasev1.MySQL) (*databasev1.MySQLBackup, error) {
	list := &databasev1.MySQLBackupList{}
	if err := o.client.List(ctx, list, client.InNamespace(m.Namespace)); err != nil {
		return nil, fmt.Errorf("list MySQLBackups: %w", err)
	}
	last := list.LastComplete()[m.Namespace+"/"+m.Name]
	return last, nil
}

// renderStatus writes m's topology as a tree, and what last happened to
// it, as of now.
func renderStatus(w io.Writer, m *databasev1.MySQL, last *databasev1.MySQLBackup, now time.Time) error {
	var b strings.Builder
	fmt.Fprintf(&b, "MySQL %s/%s: %s\n", m.Namespace, m.Name, summary(m))
	fmt.Fprintf(&b, "  %s %s, %d replicas, %s\n", engineOf(m), m.Spec.Version, m.Spec.Replicas, tlsOf(m))
	tw := tabwriter.NewWriter(&b, 0, 2, 2, ' ', 0)
	for i, in := range m.Status.Instances {
		branch := "├─"
		if i == len(m.Status.Instances)-1 {
			branch = "└─"
		}
		health := "ready"
		if !in.Ready {
			health = "NOT READY: " + in.Message
		}
		lag := ""
		if in.LagSeconds != nil {
			lag = fmt.Sprintf("lag %ds", *in.LagSeconds)
		}
		fmt.Fprintf(tw, "%s %s\t%s\t%s\t%s\t%s\n", branch, in.Name, in.Role, gtidOf(in.GTIDExecuted), lag, health)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	ago := func(t time.Time) string {
		return fmt.Sprintf("%s (%s ago)", t.UTC().Format(time.RFC3339), duration.HumanDuration(now.Sub(t)))
	}
	if f := m.Status.LastFailover; f != nil {
		fmt.Fprintf(&b, "Last failover:   %s -> %s at %s\n", f.From, f.To, ago(f.Time.Time))
	} else {
		b.WriteString("Last failover:   none\n")
	}
	if s := m.Status.Switchover; s != nil {
		fmt.Fprintf(&b, "Last switchover: %s %s at %s: %s\n", s.Request, s.Result, ago(s.Time.Time), s.Message)
	}
	if last != nil {
		st := last.Status
		fmt.Fprintf(&b, "Last backup:     %s at %s from %s, %s, GTID %s\n", last.Name, ago(st.CompletionTime.Time), st.Instance, st.Size, st.GTID)
	} else {
		b.WriteString("Last backup:     none complete\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// summary is the MySQL's condition in a few words: Ready and its message,
// or Stalled, or in progress, with why.
func summary(m *databasev1.MySQL) string {
	if c := apimeta.FindStatusCondition(m.Status.Conditions, databasev1.ConditionStalled); c != nil && c.Status == "True" {
		return "Stalled (" + c.Reason + "): " + c.Message
	}
	if c := apimeta.FindStatusCondition(m.Status.Conditions, databasev1.ConditionReady); c != nil {
		if c.Status == "True" {
			return "Ready, " + c.Message
		}
		return "not ready (" + c.Reason + "): " + c.Message
	}
	return "not observed yet"
}

// engineOf is the MySQL's engine, MySQL when the spec leaves it out.
func engineOf(m *databasev1.MySQL) databasev1.Engine {
	if m.Spec.Engine == "" {
		return databasev1.EngineMySQL
	}
	return m.Spec.Engine
}

// tlsOf says the MySQL's TLS mode, and when its certificate expires.
func tlsOf(m *databasev1.MySQL) string {
	s := "TLS " + string(databasev1.TLSModeOf(m))
	if t := m.Status.TLS; t != nil {
		s += " (certificate expires " + t.NotAfter.UTC().Format(time.RFC3339)
		if t.CARotation != "" {
			s += ", CA rotation at " + string(t.CARotation)
		}
		s += ")"
	}
	return s
}

// gtidOf shortens a long GTID set to its start and end.
func gtidOf(set string) string {
	if set == "" {
		return "-"
	}
	if len(set) > 60 {
		return set[:28] + "..." + set[len(set)-28:]
	}
	return set
}
