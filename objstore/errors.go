package objstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"

	"github.com/minio/minio-go/v7"
)

// Kind is what went wrong with a request, in the terms its remedy takes.
type Kind string

// Kinds of failure.
const (
	// Unreachable: no answer from the endpoint (address, port, network, TLS).
	Unreachable Kind = "Unreachable"
	// Denied: the credentials were refused, or lack a permission.
	Denied Kind = "Denied"
	// NoBucket: the bucket does not exist.
	NoBucket Kind = "NoBucket"
	// NotFound: the object does not exist.
	NotFound Kind = "NotFound"
	// Failed: anything else the service answered.
	Failed Kind = "Failed"
)

// Error is a failed request, said without a URL (whose query could carry a
// signature) and without the credentials.
type Error struct {
	// Op is what was being done: "upload backups/x/manifest.json".
	Op string
	// Kind classifies the failure.
	Kind Kind
	// Detail is the service's or the network's own words.
	Detail string
}

func (e *Error) Error() string {
	return e.Op + ": " + e.Detail
}

// KindOf returns the kind of err, Failed when it is not an *Error.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Failed
}

// describe turns a client error into an *Error naming the endpoint,
// bucket or object it concerns.
func (s *Store) describe(op string, err error) error {
	if err == nil {
		return nil
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // drop the URL
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &Error{Op: op, Kind: Failed, Detail: err.Error()}
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return &Error{Op: op, Kind: Unreachable, Detail: fmt.Sprintf("cannot reach %s: %v", s.cfg.Endpoint, err)}
	}
	resp := minio.ToErrorResponse(err)
	switch resp.Code {
	case "":
		return &Error{Op: op, Kind: Unreachable, Detail: fmt.Sprintf("%s: %v", s.cfg.Endpoint, err)}
	case minio.NoSuchBucket:
		return &Error{Op: op, Kind: NoBucket, Detail: fmt.Sprintf("bucket %q does not exist at %s", s.cfg.Bucket, s.cfg.Endpoint)}
	case minio.NoSuchKey, "NotFound":
		return &Error{Op: op, Kind: NotFound, Detail: "no such object in " + s.cfg.Location()}
	case "InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "InvalidSecurity", "ExpiredToken",
		"XAdminUserNotFound": // versitygw's unknown access key
		return &Error{Op: op, Kind: Denied, Detail: fmt.Sprintf("%s refused the credentials: %s (%s)", s.cfg.Endpoint, resp.Code, resp.Message)}
	}
	if resp.StatusCode == http.StatusForbidden {
		return &Error{Op: op, Kind: Denied, Detail: fmt.Sprintf("%s refused the credentials: %s (%s)", s.cfg.Endpoint, resp.Code, resp.Message)}
	}
	return &Error{Op: op, Kind: Failed, Detail: fmt.Sprintf("%s answered %s: %s", s.cfg.Endpoint, resp.Code, resp.Message)}
}
