package v1_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/applyset"
	"github.com/example/mysql-operator/internal/testenv"
)

func mysql(name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(databasev1.GroupVersion.WithKind(databasev1.MySQLKind))
	u.SetName(name)
	u.SetNamespace("default")
	return u
}

// TestValidation installs the generated CRD into a real kube-apiserver and
// checks that each invalid MySQL is rejected with a message naming the field,
// that valid ones are accepted, and that defaults are applied.
func TestValidation(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()
	c := env.Client

	creates := []struct {
		name    string
		spec    map[string]any
		wantErr string // empty: accepted
	}{
		{"replicas zero", map[string]any{"replicas": 0, "version": "8.0"}, "spec.replicas"},
		{"replicas eleven", map[string]any{"replicas": 11, "version": "8.0"}, "spec.replicas"},
		{"replicas missing", map[string]any{"version": "8.0"}, "spec.replicas: Required"},
		{"version 9.0", map[string]any{"replicas": 1, "version": "9.0"}, "spec.version"},
		{"storageSize 10G", map[string]any{"replicas": 1, "version": "8.0", "storageSize": "10G"}, "spec.storageSize"},
		{"config key with a space", map[string]any{"replicas": 1, "version": "8.0", "config": map[string]any{"bad key": "1"}}, "config: keys must be"},
		{"config value with a newline", map[string]any{"replicas": 1, "version": "8.0", "config": map[string]any{"k": "1\n[client]"}}, "spec.config.k"},
		{"volumeDeletionPolicy unknown", map[string]any{"replicas": 1, "version": "8.0", "volumeDeletionPolicy": "Shred"}, "spec.volumeDeletionPolicy"},
		{"MySQL version for MariaDB", map[string]any{"replicas": 1, "engine": "MariaDB", "version": "8.4"}, "version: MySQL takes"},
		{"MariaDB version for MySQL", map[string]any{"replicas": 1, "version": "10.11"}, "version: MySQL takes"},
		{"engine unknown", map[string]any{"replicas": 1, "engine": "Postgres", "version": "8.4"}, "spec.engine"},
		{"config owns server-id", map[string]any{"replicas": 1, "version": "8.4", "config": map[string]any{"server-id": "7"}}, "config: a setting the operator owns"},
		{"config owns Log_Bin", map[string]any{"replicas": 1, "version": "8.4", "config": map[string]any{"Log_Bin": "x"}}, "config: a setting the operator owns"},
		{"config owns semi-sync", map[string]any{"replicas": 1, "version": "8.4", "config": map[string]any{"rpl_semi_sync_master_timeout": "1"}}, "config: a setting the operator owns"},
		{"preferredPrimary beyond replicas", map[string]any{"replicas": 3, "version": "8.4", "preferredPrimary": 3}, "preferredPrimary: must be the ordinal"},
		{"config owns ssl_key", map[string]any{"replicas": 1, "version": "8.4", "config": map[string]any{"ssl-key": "/k"}}, "config: a setting the operator owns"},
		{"tls mode unknown", map[string]any{"replicas": 1, "version": "8.4", "tls": map[string]any{"mode": "Maybe"}}, "spec.tls.mode"},
		{"tls secretName not a name", map[string]any{"replicas": 1, "version": "8.4", "tls": map[string]any{"secretName": "Corp_TLS"}}, "spec.tls.secretName"},
		{"tls valid", map[string]any{"replicas": 1, "version": "8.4", "tls": map[string]any{"mode": "Required", "secretName": "corp-tls"}}, ""},
		{"minimal valid", map[string]any{"replicas": 1, "version": "5.7"}, ""},
		{"MariaDB valid", map[string]any{"replicas": 3, "engine": "MariaDB", "version": "10.11"}, ""},
		{"preferredPrimary valid", map[string]any{"replicas": 3, "version": "8.4", "preferredPrimary": 2}, ""},
		{"LTS valid", map[string]any{"replicas": 3, "version": "9.7", "config": map[string]any{"innodb_buffer_pool_size": "1G"}}, ""},
		{"full valid", map[string]any{"replicas": 10, "version": "8.0", "storageSize": "20Gi", "storageClassName": "fast",
			"config": map[string]any{"max_connections": "500"}, "rootPasswordSecretRef": map[string]any{"name": "pw"}}, ""},
	}
	for i, tt := range creates {
		t.Run("create/"+tt.name, func(t *testing.T) {
			obj := mysql("create-"+string(rune('a'+i)), tt.spec)
			err := c.Create(ctx, obj)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("valid MySQL rejected: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("invalid MySQL accepted, want an error naming %q", tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %q does not name %q", err, tt.wantErr)
			}
		})
	}

	names := []struct{ name, wantErr string }{
		{"1db", "metadata.name: must start with a lowercase letter"},
		{strings.Repeat("a", 53), "metadata.name: at most 52 characters"},
		{strings.Repeat("a", 52), ""},
	}
	for _, tt := range names {
		t.Run("name/"+tt.name, func(t *testing.T) {
			err := c.Create(ctx, mysql(tt.name, map[string]any{"replicas": 1, "version": "8.4"}))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("valid name rejected: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error %v does not name %q", err, tt.wantErr)
			}
		})
	}

	t.Run("defaults", func(t *testing.T) {
		if err := c.Create(ctx, mysql("defaults", map[string]any{"replicas": 1, "version": "8.0"})); err != nil {
			t.Fatal(err)
		}
		got := &databasev1.MySQL{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "defaults"}, got); err != nil {
			t.Fatal(err)
		}
		if got.Spec.StorageSize != "10Gi" || got.Spec.VolumeDeletionPolicy != databasev1.VolumeRetain || got.Spec.Engine != databasev1.EngineMySQL {
			t.Errorf("defaults not applied: storageSize=%q volumeDeletionPolicy=%q engine=%q", got.Spec.StorageSize, got.Spec.VolumeDeletionPolicy, got.Spec.Engine)
		}
		if got.Status.ObservedGeneration != -1 {
			t.Errorf("status.observedGeneration = %d, want -1 before any reconcile", got.Status.ObservedGeneration)
		}
	})

	updates := []struct {
		name          string
		before, after map[string]any
		wantErr       string
	}{
		{"downgrade 8.0 to 5.7", map[string]any{"replicas": 1, "version": "8.0"}, map[string]any{"replicas": 1, "version": "5.7"}, "version: cannot be downgraded"},
		{"upgrade 5.7 to 8.0", map[string]any{"replicas": 1, "version": "5.7"}, map[string]any{"replicas": 1, "version": "8.0"}, ""},
		{"upgrade 8.0 to 8.4", map[string]any{"replicas": 1, "version": "8.0"}, map[string]any{"replicas": 1, "version": "8.4"}, ""},
		{"upgrade 8.4 to 9.7", map[string]any{"replicas": 1, "version": "8.4"}, map[string]any{"replicas": 1, "version": "9.7"}, ""},
		{"skip 8.4", map[string]any{"replicas": 1, "version": "8.0"}, map[string]any{"replicas": 1, "version": "9.7"}, "version: cannot be downgraded or skip"},
		{"downgrade 9.7 to 8.4", map[string]any{"replicas": 1, "version": "9.7"}, map[string]any{"replicas": 1, "version": "8.4"}, "version: cannot be downgraded"},
		{"upgrade 10.11 to 11.4", map[string]any{"replicas": 1, "engine": "MariaDB", "version": "10.11"}, map[string]any{"replicas": 1, "engine": "MariaDB", "version": "11.4"}, ""},
		{"skip 11.4", map[string]any{"replicas": 1, "engine": "MariaDB", "version": "10.11"}, map[string]any{"replicas": 1, "engine": "MariaDB", "version": "11.8"}, "version: cannot be downgraded or skip"},
		{"engine change", map[string]any{"replicas": 1, "version": "8.4"}, map[string]any{"replicas": 1, "engine": "MariaDB", "version": "10.11"}, "engine: is immutable"},
		{"storage shrink", map[string]any{"replicas": 1, "version": "8.0", "storageSize": "20Gi"}, map[string]any{"replicas": 1, "version": "8.0", "storageSize": "10Gi"}, "storageSize: cannot shrink"},
		{"storage growth", map[string]any{"replicas": 1, "version": "8.0", "storageSize": "10Gi"}, map[string]any{"replicas": 1, "version": "8.0", "storageSize": "30Gi"}, ""},
		{"storageClassName change", map[string]any{"replicas": 1, "version": "8.0", "storageClassName": "a"}, map[string]any{"replicas": 1, "version": "8.0", "storageClassName": "b"}, "storageClassName: is immutable"},
		{"storageClassName removed", map[string]any{"replicas": 1, "version": "8.0", "storageClassName": "a"}, map[string]any{"replicas": 1, "version": "8.0"}, "storageClassName: cannot be removed"},
		{"storageClassName added", map[string]any{"replicas": 1, "version": "8.0"}, map[string]any{"replicas": 1, "version": "8.0", "storageClassName": "a"}, "storageClassName: cannot be set after creation"},
	}
	for i, tt := range updates {
		t.Run("update/"+tt.name, func(t *testing.T) {
			obj := mysql("update-"+string(rune('a'+i)), tt.before)
			if err := c.Create(ctx, obj); err != nil {
				t.Fatal(err)
			}
			obj.Object["spec"] = tt.after
			err := c.Update(ctx, obj)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("valid update rejected: %v", err)
			case tt.wantErr != "" && err == nil:
				t.Fatalf("invalid update accepted, want an error naming %q", tt.wantErr)
			case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
				t.Fatalf("error %q does not name %q", err, tt.wantErr)
			}
		})
	}

	t.Run("CRD is an ApplySet parent type", func(t *testing.T) {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: "mysqls.database.example.com"}, crd); err != nil {
			t.Fatal(err)
		}
		if crd.Labels[applyset.LabelParentType] != "true" {
			t.Errorf("CRD label %s = %q, want \"true\" so that kubectl accepts a MySQL as ApplySet parent", applyset.LabelParentType, crd.Labels[applyset.LabelParentType])
		}
	})

	t.Run("kubectl", func(t *testing.T) { testKubectl(t, env) })
}

// testKubectl checks the printer columns and the scale subresource through
// the real kubectl.
func testKubectl(t *testing.T, env *testenv.Env) {
	kubectl := filepath.Join(env.Bin, "kubectl")
	path := env.Kubeconfig(t)
	run := func(args ...string) string {
		out, err := exec.Command(kubectl, append([]string{"--kubeconfig", path, "-n", "default"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	ctx := context.Background()
	if err := env.Client.Create(ctx, mysql("x", map[string]any{"replicas": 1, "version": "8.0"})); err != nil {
		t.Fatal(err)
	}
	header := strings.Fields(strings.SplitN(run("get", "my", "x"), "\n", 2)[0])
	want := []string{"NAME", "REPLICAS", "READY", "VERSION", "PRIMARY", "STATUS", "AGE"}
	if strings.Join(header, " ") != strings.Join(want, " ") {
		t.Errorf("kubectl get my columns = %v, want %v", header, want)
	}
	run("scale", "my/x", "--replicas=3")
	got := &databasev1.MySQL{}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "x"}, got); err != nil {
			return false, err
		}
		return got.Spec.Replicas == 3, nil
	})
	if err != nil {
		t.Fatalf("kubectl scale did not set spec.replicas to 3 (is %d): %v", got.Spec.Replicas, err)
	}
}
