package lazylog

import (
	"errors"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
)

// record returns a funcr logger that appends every line, with its caller,
// to lines.
func record(lines *[]string) logr.Logger {
	return funcr.New(func(prefix, args string) { *lines = append(*lines, prefix+" "+args) },
		funcr.Options{LogCaller: funcr.All, Verbosity: 1})
}

// write logs the same lines through log, each from the same source line.
func write(log logr.Logger) {
	log = log.WithName("mysql").WithValues("controller", "mysql")
	for _, l := range []logr.Logger{log, log.WithValues("namespace", "ns", "name", "db").WithName("r")} {
		l.Info("applied child", "kind", "Service")
		l.V(1).Info("verbose")
		l.V(2).Info("never")
		l.Error(errors.New("boom"), "reconcile failed", "step", 3)
	}
}

func TestSameLines(t *testing.T) {
	var want, got []string
	write(record(&want))
	write(New(record(&got)))
	if len(got) != len(want) || len(want) != 6 {
		t.Fatalf("got %d lines, want %d (6):\n%q\n%q", len(got), len(want), got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
}

// countingSink counts the values its WithValues is given.
type countingSink struct {
	logr.LogSink
	values *int
}

func (s countingSink) WithValues(kv ...any) logr.LogSink {
	*s.values += len(kv) / 2
	return countingSink{s.LogSink.WithValues(kv...), s.values}
}

func TestValuesHeldUntilALine(t *testing.T) {
	var lines []string
	values := 0
	base := record(&lines)
	log := New(logr.New(countingSink{base.GetSink(), &values}))
	log = log.WithValues("namespace", "ns").WithValues("name", "db", "reconcileID", "x")
	if values != 0 {
		t.Fatalf("the sink was given %d values before any line", values)
	}
	log.V(2).Info("never")
	if values != 0 {
		t.Fatalf("the sink was given %d values for a line it does not write", values)
	}
	log.Info("written")
	if values != 3 || len(lines) != 1 {
		t.Fatalf("the sink was given %d values and wrote %d lines, want 3 and 1", values, len(lines))
	}
}
