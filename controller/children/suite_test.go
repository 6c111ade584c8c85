package children

import (
	"testing"

	"github.com/example/mysql-operator/internal/testenv"
)

// env is the control plane the round-trip tests apply the children to.
var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, func(e *testenv.Env) { env = e }) }
