// Package lazylog defers a logger's key-value pairs until a line is
// written.
//
// controller-runtime gives every reconcile a logger with the object's
// name, namespace and reconcile ID. zapr encodes such values the moment
// they are added, which at 1000 idle MySQLs, each checked every 10 s, was
// about a tenth of all the manager allocated, for lines that an idle check
// never writes. zap's own WithLazy does what this package does, but zapr
// does not use it.
package lazylog

import (
	"slices"

	"github.com/go-logr/logr"
)

// New returns a logger that writes what base writes, with the values added
// by WithValues handed to base's sink only when a line is written.
func New(base logr.Logger) logr.Logger {
	sink := base.GetSink()
	if sink == nil {
		return base
	}
	// One more frame, lazy's, stands between the caller and the sink.
	if cd, ok := sink.(logr.CallDepthLogSink); ok {
		sink = cd.WithCallDepth(1)
	}
	return logr.New(&lazy{sink: sink})
}

// lazy is a logr.LogSink holding the values added since its sink.
type lazy struct {
	sink logr.LogSink
	kv   []any
}

// Init does nothing: the sink New wraps was initialised with its logger.
func (l *lazy) Init(logr.RuntimeInfo) {}

// Enabled says whether the sink writes lines of this level.
func (l *lazy) Enabled(level int) bool { return l.sink.Enabled(level) }

// Info writes an informational line, with the held values.
func (l *lazy) Info(level int, msg string, kv ...any) { l.withHeld().Info(level, msg, kv...) }

// Error writes an error line, with the held values.
func (l *lazy) Error(err error, msg string, kv ...any) { l.withHeld().Error(err, msg, kv...) }

// WithValues holds kv after the values already held.
func (l *lazy) WithValues(kv ...any) logr.LogSink {
	return &lazy{sink: l.sink, kv: append(slices.Clip(l.kv), kv...)}
}

// WithName names the sink; the held values stay held.
func (l *lazy) WithName(name string) logr.LogSink {
	return &lazy{sink: l.sink.WithName(name), kv: l.kv}
}

// WithCallDepth passes the depth to the sink, when it takes one.
func (l *lazy) WithCallDepth(depth int) logr.LogSink {
	if cd, ok := l.sink.(logr.CallDepthLogSink); ok {
		return &lazy{sink: cd.WithCallDepth(depth), kv: l.kv}
	}
	return l
}

// withHeld returns the sink with the held values added.
func (l *lazy) withHeld() logr.LogSink {
	if len(l.kv) == 0 {
		return l.sink
	}
	return l.sink.WithValues(l.kv...)
}
