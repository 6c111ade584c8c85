package children

import (
	"os"
	"reflect"
	goruntime "runtime"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"

	"github.com/example/mysql-operator/internal/testenv"
)

// cachedObject is one object of the fixture as the API server sends it to
// the manager's informers, and the transform the manager's cache runs on it.
type cachedObject struct {
	kind      string
	raw       []byte
	decoder   runtime.Decoder
	transform func(any) (any, error)
}

// decode decodes the object anew and, if transformed, runs the cache's
// transform on it.
func (c cachedObject) decode(tb testing.TB, transformed bool) runtime.Object {
	obj, _, err := c.decoder.Decode(c.raw, nil, nil)
	if err != nil {
		tb.Fatal(err)
	}
	if !transformed || c.transform == nil {
		return obj
	}
	out, err := c.transform(obj)
	if err != nil {
		tb.Fatal(err)
	}
	return out.(runtime.Object)
}

// cacheFixture reads testdata/cache/mysql-3-instances.json, the objects
// the manager caches of one MySQL with three instances on the real node
// (kubectl get -o json --show-managed-fields, the Secrets' values
// replaced): built-in kinds encoded in protobuf, the MySQL in JSON, as the
// manager's client asks for them, each with the transform of
// CacheOptions.
func cacheFixture(tb testing.TB) []cachedObject {
	data, err := os.ReadFile("testdata/cache/mysql-3-instances.json")
	if err != nil {
		tb.Fatal(err)
	}
	list := &unstructured.UnstructuredList{}
	if err := list.UnmarshalJSON(data); err != nil {
		tb.Fatal(err)
	}
	pb := protobuf.NewSerializer(testenv.Scheme, testenv.Scheme)
	js := json.NewSerializerWithOptions(json.DefaultMetaFactory, testenv.Scheme, testenv.Scheme, json.SerializerOptions{})
	opts := CacheOptions(labels.Everything())
	var out []cachedObject
	for _, u := range list.Items {
		typed, err := testenv.Scheme.New(u.GroupVersionKind())
		if err != nil {
			tb.Fatal(err)
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, typed); err != nil {
			tb.Fatal(err)
		}
		c := cachedObject{kind: u.GetKind(), decoder: pb, transform: opts.DefaultTransform}
		for o, by := range opts.ByObject {
			if reflect.TypeOf(o) == reflect.TypeOf(typed) && by.Transform != nil {
				c.transform = by.Transform
			}
		}
		enc := runtime.Encoder(pb)
		if u.GroupVersionKind().Group == "database.example.com" {
			c.decoder, enc = js, js
		}
		if c.raw, err = runtime.Encode(enc, typed); err != nil {
			tb.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

// heapPerMySQL returns the heap that n copies of the fixture's objects keep
// once decoded, and transformed if asked, over n.
func heapPerMySQL(tb testing.TB, fixture []cachedObject, n int, transformed bool) float64 {
	keep := make([]runtime.Object, 0, n*len(fixture))
	var before, after goruntime.MemStats
	goruntime.GC()
	goruntime.ReadMemStats(&before)
	for range n {
		for _, c := range fixture {
			keep = append(keep, c.decode(tb, transformed))
		}
	}
	goruntime.GC()
	goruntime.ReadMemStats(&after)
	goruntime.KeepAlive(keep)
	return float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
}

// BenchmarkCacheMySQL states what one MySQL with three instances costs the
// manager's cache on a real node: "B/MySQL" is the heap its objects keep
// as the cache keeps them ("Pod-B/MySQL" and so on, those of one kind),
// "whole-B/MySQL" what they would keep untrimmed;
// each iteration decodes and transforms its objects, as a restarted
// manager's initial list does.
//
//	go test ./controller/children -run '^$' -bench CacheMySQL
func BenchmarkCacheMySQL(b *testing.B) {
	fixture := cacheFixture(b)
	b.ReportAllocs()
	for b.Loop() {
		for _, c := range fixture {
			c.decode(b, true)
		}
	}
	// After the loop: its first pass resets the metrics reported.
	b.ReportMetric(heapPerMySQL(b, fixture, 200, true), "B/MySQL")
	b.ReportMetric(heapPerMySQL(b, fixture, 200, false), "whole-B/MySQL")
	byKind := map[string][]cachedObject{}
	for _, c := range fixture {
		byKind[c.kind] = append(byKind[c.kind], c)
	}
	for kind, objs := range byKind {
		b.ReportMetric(heapPerMySQL(b, objs, 200, true), kind+"-B/MySQL")
	}
}
