// Command chartgen writes the generated parts of the Helm chart (its CRDs
// and the manager's RBAC) from kustomize/, in the repository root it runs
// in. `make manifests` runs it; see internal/chartgen.
package main

import (
	"fmt"
	"os"

	"github.com/example/mysql-operator/internal/chartgen"
)

func main() {
	if err := chartgen.Write("."); err != nil {
		fmt.Fprintf(os.Stderr, "chartgen: %v\n", err)
		os.Exit(1)
	}
}
