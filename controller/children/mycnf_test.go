package children

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	databasev1 "github.com/example/mysql-operator/api/v1"
)

// TestResourceSettings: the buffer pool and the connection limit follow
// the container's memory, unless spec.config sets them.
func TestResourceSettings(t *testing.T) {
	mem := func(limit, request string) corev1.ResourceRequirements {
		r := corev1.ResourceRequirements{}
		if limit != "" {
			r.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(limit)}
		}
		if request != "" {
			r.Requests = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(request)}
		}
		return r
	}
	for _, tt := range []struct {
		name      string
		resources corev1.ResourceRequirements
		config    map[string]databasev1.ConfigValue
		want      []setting
	}{
		{"no memory", corev1.ResourceRequirements{}, nil, nil},
		{"1Gi limit", mem("1Gi", ""), nil, []setting{{"innodb_buffer_pool_size", "512M"}, {"max_connections", "64"}}},
		{"the limit, not the request", mem("16Gi", "1Gi"), nil, []setting{{"innodb_buffer_pool_size", "8192M"}, {"max_connections", "1024"}}},
		{"a request alone", mem("", "2Gi"), nil, []setting{{"innodb_buffer_pool_size", "1024M"}, {"max_connections", "128"}}},
		{"small", mem("128Mi", ""), nil, []setting{{"innodb_buffer_pool_size", "128M"}, {"max_connections", "50"}}},
		{"huge", mem("256Gi", ""), nil, []setting{{"innodb_buffer_pool_size", "131072M"}, {"max_connections", "4000"}}},
		{"config sets one", mem("1Gi", ""), map[string]databasev1.ConfigValue{"Innodb-Buffer-Pool-Size": "300M"}, []setting{{"max_connections", "64"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := &databasev1.MySQL{Spec: databasev1.MySQLSpec{Resources: tt.resources, Config: tt.config}}
			got := resourceSettings(m)
			if len(got) != len(tt.want) {
				t.Fatalf("resourceSettings = %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("resourceSettings = %v, want %v", got, tt.want)
				}
			}
		})
	}
}
