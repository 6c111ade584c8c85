package children

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/vocabulary"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// testAgentImage is the agent image the builders' tests use.
const testAgentImage = "registry.example.com/mysql-operator:v1"

// testAgent is the agent the builders' tests use: that image, fencing after
// the operator's default failover grace.
var testAgent = Agent{Image: testAgentImage, FenceAfter: 3 * time.Second}

// testPasswords are the operator's passwords the builders' tests use.
var testPasswords = map[string][]byte{AdminPasswordKey: []byte("a"), ReplPasswordKey: []byte("r"), AgentPasswordKey: []byte("g")}

func sample(mutate func(*databasev1.MySQL)) *databasev1.MySQL {
	m := &databasev1.MySQL{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "team-a", UID: "0c5d7a4e-1111-4b2a-9f00-000000000001",
			Labels: map[string]string{"applyset.kubernetes.io/part-of": "someone-else", "argocd.argoproj.io/instance": "app"}},
		Spec: databasev1.MySQLSpec{Replicas: 1, Version: "8.0", StorageSize: "10Gi", VolumeDeletionPolicy: databasev1.VolumeRetain},
	}
	if mutate != nil {
		mutate(m)
	}
	return m
}

// TestBuildersGolden renders every child of a few MySQLs and compares them
// with testdata/<case>.yaml; `go test ./controller/children -run Golden -update`
// rewrites the files after an intended change.
func TestBuildersGolden(t *testing.T) {
	cases := map[string]*databasev1.MySQL{
		"minimal": sample(nil),
		"full": sample(func(m *databasev1.MySQL) {
			m.Spec.Replicas = 3
			m.Spec.Version = "5.7"
			m.Spec.Image = "registry.example.com/mysql:5.7.44"
			m.Spec.StorageSize = "50Gi"
			m.Spec.StorageClassName = ptr.To("fast")
			m.Spec.VolumeDeletionPolicy = databasev1.VolumeDelete
			m.Spec.Config = map[string]databasev1.ConfigValue{"max_connections": "500", "innodb_buffer_pool_size": "1G"}
			m.Spec.Resources = corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("1Gi")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")},
			}
			m.Spec.NodeSelector = map[string]string{"disk": "ssd"}
			m.Spec.Tolerations = []corev1.Toleration{{Key: "db", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
			m.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
				PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 100, PodAffinityTerm: corev1.PodAffinityTerm{
					TopologyKey: "kubernetes.io/hostname", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{vocabulary.LabelInstance: "db"}}}}}}}
		}),
		"mariadb": sample(func(m *databasev1.MySQL) {
			m.Spec.Replicas = 3
			m.Spec.Engine = databasev1.EngineMariaDB
			m.Spec.Version = "10.11"
			m.Spec.Config = map[string]databasev1.ConfigValue{"max_connections": "200"}
			m.Spec.TLS = &databasev1.TLSSpec{Mode: databasev1.TLSRequired}
			m.Spec.Resources = corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("4Gi")}}
		}),
		"backup": sample(func(m *databasev1.MySQL) {
			m.Spec.Replicas = 2
			m.Spec.Engine = databasev1.EngineMariaDB
			m.Spec.Version = "10.11"
			storage := databasev1.BackupStorage{S3: databasev1.S3Storage{Endpoint: "https://s3.example.com", Bucket: "backups",
				Prefix: "team-a/db", Region: "eu-west-1", PathStyle: true,
				CredentialsSecretRef: databasev1.LocalSecretReference{Name: "s3-credentials"},
				CASecretRef:          &databasev1.CASecretReference{Name: "s3-ca"}}}
			m.Spec.Backup = &databasev1.BackupPolicy{Schedule: "0 3 * * *", Storage: storage,
				BinlogArchive: &databasev1.BinlogArchive{MaxDelay: &metav1.Duration{Duration: 30 * time.Second}},
				RateLimit:     ptr.To(resource.MustParse("100Mi"))}
			m.Spec.Restore = &databasev1.RestoreSpec{Storage: storage, Backup: "db-20261201-030000",
				PointInTime: &metav1.Time{Time: time.Date(2026, 12, 1, 14, 3, 27, 0, time.UTC)}}
		}),
		"cert-manager": sample(func(m *databasev1.MySQL) {
			m.Spec.Replicas = 2
			m.Spec.TLS = &databasev1.TLSSpec{CertManager: &databasev1.CertManagerTLS{IssuerRef: databasev1.IssuerReference{Name: "corp", Kind: "ClusterIssuer"}}}
		}),
		"secret-ref": sample(func(m *databasev1.MySQL) {
			m.Spec.RootPasswordSecretRef = &databasev1.SecretKeyReference{Name: "corp-root", Key: "pw"}
			m.Spec.TLS = &databasev1.TLSSpec{Mode: databasev1.TLSDisabled}
		}),
	}
	for name, m := range cases {
		t.Run(name, func(t *testing.T) {
			var out []byte
			all := []any{RootSecret(m, []byte("not-a-real-password")), OperatorSecret(m, testPasswords), ConfigMap(m), HeadlessService(m), Service(m), StatefulSet(m, testAgent), PodDisruptionBudget(m)}
			if c := Certificate(m); c != nil {
				all = append(all, c.Object)
			}
			all = append(all, PodMonitor(m).Object)
			if m.Spec.Backup != nil {
				b := &databasev1.MySQLBackup{ObjectMeta: metav1.ObjectMeta{Name: "db-20261201-0300", Namespace: m.Namespace, UID: "0c5d7a4e-2222"}}
				all = append(all, VerifyPod(m, b, testAgentImage))
			}
			for _, child := range all {
				b, err := yaml.Marshal(child)
				if err != nil {
					t.Fatal(err)
				}
				out = append(append(out, "---\n"...), b...)
			}
			golden := filepath.Join("testdata", name+".yaml")
			if *update {
				if err := os.WriteFile(golden, out, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if string(want) != string(out) {
				t.Errorf("%s differs from the builders' output; run `go test ./controller/children -run Golden -update` if intended.\ngot:\n%s", golden, out)
			}
		})
	}
}

// TestBuilders checks the properties each child must have, whatever the spec.
func TestBuilders(t *testing.T) {
	tests := []struct {
		name  string
		m     *databasev1.MySQL
		image string
		pvc   string
	}{
		{"default image", sample(nil), "mysql:8.0", "Retain"},
		{"MariaDB image", sample(func(m *databasev1.MySQL) { m.Spec.Engine, m.Spec.Version = databasev1.EngineMariaDB, "11.4" }), "mariadb:11.4", "Retain"},
		{"5.7", sample(func(m *databasev1.MySQL) { m.Spec.Version = "5.7" }), "mysql:5.7", "Retain"},
		{"image override, delete volumes", sample(func(m *databasev1.MySQL) {
			m.Spec.Image = "mirror/mysql:8"
			m.Spec.VolumeDeletionPolicy = databasev1.VolumeDelete
		}), "mirror/mysql:8", "Delete"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sts := StatefulSet(tt.m, testAgent)
			pod := sts.Spec.Template.Spec
			c := pod.Containers[0]
			if *c.Image != tt.image {
				t.Errorf("image = %q, want %q", *c.Image, tt.image)
			}
			if !*pod.SecurityContext.RunAsNonRoot || *pod.AutomountServiceAccountToken {
				t.Error("pod may run as root or mounts a ServiceAccount token")
			}
			for _, c := range append(pod.InitContainers, pod.Containers...) {
				for _, e := range c.Env {
					if e.Value != nil {
						t.Errorf("container %s: env %s has a literal value", *c.Name, *e.Name)
					}
				}
				sc := c.SecurityContext
				if !*sc.ReadOnlyRootFilesystem || *sc.AllowPrivilegeEscalation || len(sc.Capabilities.Add) > 0 || sc.Capabilities.Drop[0] != "ALL" {
					t.Errorf("container %s is not restricted: %+v", *c.Name, sc)
				}
			}
			if got := string(*sts.Spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted); got != tt.pvc {
				t.Errorf("whenDeleted = %s, want %s", got, tt.pvc)
			}
			if got := string(*sts.Spec.PersistentVolumeClaimRetentionPolicy.WhenScaled); got != "Retain" {
				t.Errorf("whenScaled = %s, want Retain", got)
			}
			for k := range StatefulSet(tt.m, testAgent).Labels {
				if k == "argocd.argoproj.io/instance" {
					t.Errorf("child copies the parent's label %s", k)
				}
			}
			if got := StatefulSet(tt.m, testAgent).Labels["applyset.kubernetes.io/part-of"]; got != Parent(tt.m).ID() {
				t.Errorf("part-of = %q, want the MySQL's ApplySet id %q", got, Parent(tt.m).ID())
			}
		})
	}
}

// TestConfigHash checks that only a config change changes the pod template's hash.
func TestConfigHash(t *testing.T) {
	base := sample(func(m *databasev1.MySQL) { m.Spec.Config = map[string]databasev1.ConfigValue{"a": "1", "b": "2"} })
	hash := func(m *databasev1.MySQL) string {
		return StatefulSet(m, testAgent).Spec.Template.Annotations[vocabulary.AnnotationConfigHash]
	}
	if hash(base) != hash(sample(func(m *databasev1.MySQL) { m.Spec.Config = map[string]databasev1.ConfigValue{"b": "2", "a": "1"} })) {
		t.Error("hash depends on map order")
	}
	if hash(base) != hash(sample(func(m *databasev1.MySQL) {
		m.Spec.Config = base.Spec.Config
		m.Spec.Replicas = 5
	})) {
		t.Error("hash changed with replicas")
	}
	if hash(base) == hash(sample(func(m *databasev1.MySQL) { m.Spec.Config = map[string]databasev1.ConfigValue{"a": "1", "b": "3"} })) {
		t.Error("hash did not change with config")
	}
	if got, want := MyCnf(base), "\na = 1\nb = 2\n!include "+podCnfPath+"\n"; !strings.HasSuffix(got, want) || !strings.HasPrefix(got, "[mysqld]\n") {
		t.Errorf("my.cnf = %q, want the operator's settings, then the user's, then the pod's", got)
	}
}
