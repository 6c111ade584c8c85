package backup

import (
	"testing"

	"github.com/example/mysql-operator/internal/ctrltest"
)

// env is the control plane the envtest tests of this package share.
var env *ctrltest.Env

func TestMain(m *testing.M) { ctrltest.Main(m, func(e *ctrltest.Env) { env = e }) }
