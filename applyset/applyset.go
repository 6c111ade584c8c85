// Package applyset applies a set of objects as one KEP-3659 ApplySet: it
// labels the parent and the members the way kubectl does, server-side applies
// each member only when the fields its field manager owns differ from the
// desired ones, and prunes the members that are no longer desired.
package applyset

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Label and annotation keys of the ApplySet specification, as kubectl's
// pkg/cmd/apply/applyset.go names them.
const (
	// LabelPartOf marks an object as a member of the ApplySet whose id is its value.
	LabelPartOf = "applyset.kubernetes.io/part-of"
	// LabelID marks the parent of an ApplySet; its value is the ApplySet id.
	LabelID = "applyset.kubernetes.io/id"
	// LabelParentType marks a CRD whose objects may be ApplySet parents.
	LabelParentType = "applyset.kubernetes.io/is-parent-type"
	// AnnotationTooling names the tool that manages the ApplySet, as <name>/<version>.
	AnnotationTooling = "applyset.kubernetes.io/tooling"
	// AnnotationGroupKinds lists, sorted and comma-separated, the kinds that may have members.
	AnnotationGroupKinds = "applyset.kubernetes.io/contains-group-kinds"
	// AnnotationAdditionalNamespaces lists namespaces other than the parent's holding members.
	AnnotationAdditionalNamespaces = "applyset.kubernetes.io/additional-namespaces"
)

// Parent identifies the parent object of an ApplySet.
type Parent struct {
	// Name and Namespace of the parent object.
	Name, Namespace string
	// GroupKind of the parent object.
	GroupKind schema.GroupKind
}

// ID returns the ApplySet id of the parent, computed as kubectl does:
// "applyset-" + base64url(sha256(name.namespace.kind.group)) + "-v1".
func (p Parent) ID() string {
	sum := sha256.Sum256([]byte(strings.Join([]string{p.Name, p.Namespace, p.GroupKind.Kind, p.GroupKind.Group}, ".")))
	return fmt.Sprintf("applyset-%s-v1", base64.RawURLEncoding.EncodeToString(sum[:]))
}

// ParentLabels returns the labels an ApplySet parent carries.
func (p Parent) ParentLabels() map[string]string {
	return map[string]string{LabelID: p.ID()}
}

// ParentAnnotations returns the annotations an ApplySet parent carries: the
// tooling and the kinds its members may have, all in the parent's namespace.
func ParentAnnotations(tooling string, kinds []schema.GroupKind) map[string]string {
	names := make([]string, 0, len(kinds))
	for _, gk := range kinds {
		names = append(names, gk.String())
	}
	sort.Strings(names)
	return map[string]string{
		AnnotationTooling:              tooling,
		AnnotationGroupKinds:           strings.Join(names, ","),
		AnnotationAdditionalNamespaces: "",
	}
}

// MemberLabels returns the label that makes an object a member of the parent's ApplySet.
func (p Parent) MemberLabels() map[string]string {
	return map[string]string{LabelPartOf: p.ID()}
}
