package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/children"
	"github.com/example/mysql-operator/controller/vocabulary"
)

// switchoverCommand is `kubectl mysql switchover NAME --to INSTANCE`.
func (o *options) switchoverCommand() *cobra.Command {
	var to string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "switchover NAME --to INSTANCE",
		Short: "Move a MySQL's primary to another instance, once, without touching its spec",
		Long: "Ask the operator for a switchover to INSTANCE (an ordinal, or a pod's name) with a one-shot request: the\n" +
			"annotation " + vocabulary.AnnotationSwitchover + "=<pod>@<time>, which status.switchover answers. The spec,\n" +
			"which Git owns, is not changed, and the primary stays where it is moved. A MySQL whose\n" +
			"spec.preferredPrimary is set keeps the primary Git names: change it there instead.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.switchover(cmd.Context(), args[0], to, timeout)
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "the instance to make primary: an ordinal or a pod's name")
	cmd.Flags().DurationVar(&timeout, "timeout", 5*time.Minute, "how long to wait for the answer")
	_ = cmd.MarkFlagRequired("to")
	return cmd
}

// switchover asks for one and waits for its answer.
func (o *options) switchover(ctx context.Context, name, to string, timeout time.Duration) error {
	m, err := o.mysql(ctx, name)
	if err != nil {
		return err
	}
	pod, err := instanceName(m, to)
	if err != nil {
		return err
	}
	if p := m.Spec.PreferredPrimary; p != nil {
		return fmt.Errorf("spec.preferredPrimary of %s is %d: the operator keeps the primary it names; change it where the spec comes from (Git)", name, *p)
	}
	request := pod + "@" + time.Now().UTC().Format(time.RFC3339)
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{vocabulary.AnnotationSwitchover: request}}})
	if err := o.client.Patch(ctx, m, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("ask for the switchover: %w", err)
	}
	fmt.Fprintf(o.streams.Out, "asked for a switchover of %s to %s (%s)\n", name, pod, request)
	var answer *databasev1.SwitchoverStatus
	err = wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		m, err := o.mysql(ctx, name)
		if err != nil {
			return false, err
		}
		if s := m.Status.Switchover; s != nil && s.Request == request {
			answer = s
		}
		return answer != nil, nil
	})
	switch {
	case err != nil:
		return fmt.Errorf("no answer within %s (see kubectl describe my %s): %w", timeout, name, err)
	case answer.Result != databasev1.SwitchoverDone:
		return fmt.Errorf("refused: %s", answer.Message)
	}
	fmt.Fprintln(o.streams.Out, answer.Message)
	return nil
}

// instanceName is the pod of m that arg names: an ordinal or a pod's name.
func instanceName(m *databasev1.MySQL, arg string) (string, error) {
	pod := arg
	if n, err := strconv.Atoi(arg); err == nil {
		pod = children.PodName(m, n)
	}
	if i := children.PodIndex(m, pod); i < 0 || i >= int(m.Spec.Replicas) {
		return "", fmt.Errorf("%s is not an instance of %s (%d replicas)", arg, m.Name, m.Spec.Replicas)
	}
	return pod, nil
}
