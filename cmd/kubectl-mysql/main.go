// Command kubectl-mysql is the kubectl plugin of the mysql-operator
// (package plugin): `kubectl mysql status|login|credentials|switchover|backup`.
// Install it with `go install github.com/example/mysql-operator/cmd/kubectl-mysql@latest`
// onto your PATH, or with krew (plugins/krew/mysql.yaml).
package main

import (
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/example/mysql-operator/plugin"
)

func main() {
	cmd := plugin.NewCommand(genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})
	if err := cmd.Execute(); err != nil {
		os.Exit(1)
	}
}
