package informer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubeevents/kubeevents/internal/resource"
)

// APIError turns an error from talking to the API server into one line that says what
// failed and what to do about it. verb and res describe the request ("list", pods) when
// the server's own message does not.
func APIError(err error, verb string, res resource.Resource) error {
	if err == nil {
		return nil
	}
	switch {
	case apierrors.IsForbidden(err):
		msg := err.Error()
		if i := strings.Index(msg, "is forbidden: "); i >= 0 {
			msg = msg[i+len("is forbidden: "):]
		}
		return fmt.Errorf("forbidden: %s (kubeevents needs list and watch rights; ask your cluster admin or use another --context)", lowerFirst(msg))
	case apierrors.IsUnauthorized(err):
		return errors.New("unauthorized: the API server rejected the credentials (expired or wrong token or certificate?); check --kubeconfig, --context and --token")
	case apierrors.IsNotFound(err) && res.GVR.Resource != "":
		return fmt.Errorf("the server has no resource %q (%s) any more: %v", res.String(), res.GVR.GroupVersion(), err)
	case apierrors.IsTooManyRequests(err):
		// API Priority and Fairness (or a proxy) turned the request away, and went on
		// doing so through client-go's own retries.
		what := "the request"
		if res.GVR.Resource != "" {
			what = "the " + verb + " of " + res.String()
		}
		return fmt.Errorf("throttled by the API server: 429 Too Many Requests; it turned %s away after retries (API Priority and Fairness, or a proxy, rejects this user's requests); try again later, or ask your cluster admin which FlowSchema matches you", what)
	case apierrors.IsBadRequest(err) || apierrors.IsInvalid(err):
		return fmt.Errorf("the API server refused to %s %s: %s", verb, res, apiMessage(err))
	}
	if reason, server, ok := connectionProblem(err); ok {
		hint := "is the cluster up? check --kubeconfig, --context and --server"
		if strings.HasPrefix(reason, "no answer") {
			hint += "; --request-timeout sets how long to wait"
		}
		return fmt.Errorf("cannot reach the API server%s: %s (%s)", server, reason, hint)
	}
	return err
}

// connectionProblem recognises errors that mean the server could not be reached.
func connectionProblem(err error) (reason, server string, ok bool) {
	var urlErr *url.Error
	limit := "in time"
	if errors.As(err, &urlErr) {
		if u, perr := url.Parse(urlErr.URL); perr == nil {
			server = " at " + u.Scheme + "://" + u.Host
			// client-go sends each request's time limit along: --request-timeout, or
			// where it is not set, the request's own default (32s for discovery).
			if t := u.Query().Get("timeout"); t != "" {
				limit = "within " + t
			}
		}
	}
	var opErr *net.OpError
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &dnsErr):
		return "no such host " + dnsErr.Name, server, true
	case errors.As(err, &opErr):
		return shortReason(err), server, true
	case strings.Contains(err.Error(), "TLS handshake timeout"):
		// client-go's own limit on the handshake, whatever a longer --request-timeout says.
		return "the TLS handshake got no answer within 10s", server, true
	case errors.Is(err, context.DeadlineExceeded), isTimeout(err):
		return "no answer " + limit, server, true
	case urlErr != nil:
		return urlErr.Err.Error(), server, true
	}
	return "", "", false
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

func apiMessage(err error) string {
	if status, ok := err.(apierrors.APIStatus); ok && status.Status().Message != "" {
		return status.Status().Message
	}
	return err.Error()
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}
