package informer

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"regexp"

	"github.com/kubeevents/kubeevents/internal/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// secretsGK is the one kind whose values kubeevents hides by default.
var secretsGK = schema.GroupKind{Kind: "Secret"}

// IsSecret reports whether res is core Secrets, the kind whose values kubeevents hides
// (and keeps out of client-go's logs) unless --show-secrets.
func IsSecret(res resource.Resource) bool { return res.GVK.GroupKind() == secretsGK }

// lastAppliedAnnotation holds a copy of the whole object as last applied, secret values
// included.
const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// redactor replaces Secret values before objects enter the informer's cache, so no sink,
// diff or jq expression can ever see them. A value becomes "<redacted: N bytes #f>",
// where f is an HMAC of the value under a key drawn at start-up and never shown: two
// values are told apart (a change still shows as a change, even to a value of the same
// length) within one run, while the fingerprint says nothing about the value itself.
// --resume keeps the key in its private checkpoint (Options.RedactionKey), so that an
// unchanged value keeps its placeholder across runs.
type redactor struct{ key []byte }

// newRedactor uses key, or draws one if it is empty.
func newRedactor(key []byte) *redactor {
	if len(key) == 0 {
		key = make([]byte, 32)
		_, _ = rand.Read(key) // crypto/rand.Read never fails on supported platforms
	}
	return &redactor{key: key}
}

func (r *redactor) placeholder(value []byte) string {
	mac := hmac.New(sha256.New, r.key)
	mac.Write(value)
	return fmt.Sprintf("<redacted: %d bytes #%s>", len(value), hex.EncodeToString(mac.Sum(nil)[:4]))
}

// redactSecret rewrites an unstructured Secret in place: every value of data (base64, so
// its decoded length is reported) and stringData, and the last-applied annotation.
func (r *redactor) redactSecret(u *unstructured.Unstructured) {
	if data, ok := u.Object["data"].(map[string]any); ok {
		for k, v := range data {
			s, _ := v.(string)
			raw, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				raw = []byte(s)
			}
			data[k] = r.placeholder(raw)
		}
	}
	if data, ok := u.Object["stringData"].(map[string]any); ok {
		for k, v := range data {
			s, _ := v.(string)
			data[k] = r.placeholder([]byte(s))
		}
	}
	r.redactLastApplied(u)
}

// redactLastApplied hides the last-applied annotation, which holds the whole Secret as
// applied, values included: in full objects and in metadata-only ones alike.
func (r *redactor) redactLastApplied(m metav1.Object) {
	if annotations := m.GetAnnotations(); annotations[lastAppliedAnnotation] != "" {
		annotations[lastAppliedAnnotation] = r.placeholder([]byte(annotations[lastAppliedAnnotation]))
		m.SetAnnotations(annotations)
	}
}

// Redactor redacts Secret values that come from elsewhere than the API server (a
// recording replayed, package replay) as the informer does: the same placeholders,
// under a key drawn for it.
type Redactor struct{ r *redactor }

// NewRedactor draws a Redactor's key.
func NewRedactor() *Redactor { return &Redactor{r: newRedactor(nil)} }

// Placeholder is what a Secret's value becomes.
func (r *Redactor) Placeholder(value []byte) string { return r.r.placeholder(value) }

// LastAppliedAnnotation is the annotation that holds a whole Secret as last applied,
// values included: redacted as a whole.
const LastAppliedAnnotation = lastAppliedAnnotation

// placeholderPattern is what placeholder makes.
var placeholderPattern = regexp.MustCompile(`^<redacted: [0-9]+ bytes #[0-9a-f]{8}>$`)

// IsPlaceholder reports whether s is a redacted value's placeholder: what a Secret
// recorded without --show-secrets already holds, and is not redacted again.
func IsPlaceholder(s string) bool { return placeholderPattern.MatchString(s) }
