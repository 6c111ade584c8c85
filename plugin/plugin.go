// Package plugin is `kubectl mysql`, the kubectl plugin of the operator:
// a MySQL's topology at a glance (status), a client session in a pod
// (login), the credentials that log in (credentials), a one-shot
// switchover (switchover) and an on-demand backup (backup). It reads what
// the operator writes (status, Secrets) and asks the operator for things
// only through the API (an annotation, a MySQLBackup); the one SQL session
// it opens is `agent login` in a pod, as the user who runs it.
package plugin

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
)

// options are what every command needs: the kubeconfig flags and, once
// completed, a client, the REST config and the namespace.
type options struct {
	flags   *genericclioptions.ConfigFlags
	streams genericiooptions.IOStreams

	client    client.Client
	rest      *rest.Config
	namespace string
}

// NewCommand returns the `kubectl mysql` command writing to streams.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	o := &options{flags: genericclioptions.NewConfigFlags(true), streams: streams}
	root := &cobra.Command{
		Use:          "kubectl-mysql",
		Short:        "Look after the MySQLs of the mysql-operator",
		Annotations:  map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl mysql"},
		SilenceUsage: true,
		PersistentPreRunE: func(*cobra.Command, []string) error {
			return o.complete()
		},
	}
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	o.flags.AddFlags(root.PersistentFlags())
	root.AddCommand(o.statusCommand(), o.loginCommand(), o.credentialsCommand(), o.switchoverCommand(), o.backupCommand())
	return root
}

// complete makes the client from the kubeconfig flags.
func (o *options) complete() error {
	cfg, err := o.flags.ToRESTConfig()
	if err != nil {
		return err
	}
	ns, _, err := o.flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return err
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := databasev1.AddToScheme(scheme); err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("a client of the cluster: %w", err)
	}
	o.client, o.rest, o.namespace = c, cfg, ns
	return nil
}

// mysql reads the MySQL name of the namespace.
func (o *options) mysql(ctx context.Context, name string) (*databasev1.MySQL, error) {
	m := &databasev1.MySQL{}
	if err := o.client.Get(ctx, client.ObjectKey{Namespace: o.namespace, Name: name}, m); err != nil {
		return nil, fmt.Errorf("MySQL %s/%s: %w", o.namespace, name, err)
	}
	return m, nil
}
