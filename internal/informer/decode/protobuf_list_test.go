package decode

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// listPage is one page of pods from first to first+n, with a continue token if more.
// Later pods are smaller, so that a page fits in the buffer of the page before it.
func listPage(first, n, total int) *corev1.PodList {
	l := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "77"}}
	for i := first; i < min(first+n, total); i++ {
		l.Items = append(l.Items, corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%03d", i), Namespace: "ns", ResourceVersion: strconv.Itoa(100 + i),
				Labels:        map[string]string{"app": "web", "i": strconv.Itoa(i)},
				Annotations:   map[string]string{"note": strings.Repeat(strconv.Itoa(i%10), 300-i)},
				ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{}}`)}}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:" + strconv.Itoa(i),
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(strconv.Itoa(i) + "m")}}}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0." + strconv.Itoa(i%250)},
		})
	}
	if first+n < total {
		l.Continue = strconv.Itoa(first + n)
	}
	return l
}

// encodeAs writes obj in the media type as the API server does.
func encodeAs(t *testing.T, mediaType string, obj runtime.Object) []byte {
	t.Helper()
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), mediaType)
	if !ok {
		t.Fatalf("no %s serializer", mediaType)
	}
	obj = obj.DeepCopyObject()
	obj.GetObjectKind().SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("PodList"))
	raw, err := runtime.Encode(info.Serializer, obj)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// serveList answers lists of pods in pages as the API server does, in mediaType;
// status other than 200 answers with a 410 Expired Status.
func serveList(t *testing.T, mediaType string, total int, expireAt string) rest.Interface {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("continue") != "" && q.Get("continue") == expireAt {
			status := apierrors.NewResourceExpired("the continue token is too old").ErrStatus
			status.APIVersion, status.Kind = "v1", "Status"
			w.Header().Set("Content-Type", runtime.ContentTypeJSON)
			w.WriteHeader(http.StatusGone)
			fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":%q,"reason":"Expired","code":410}`, status.Message)
			return
		}
		first, _ := strconv.Atoi(q.Get("continue"))
		limit, _ := strconv.Atoi(q.Get("limit"))
		if limit == 0 {
			limit = total
		}
		w.Header().Set("Content-Type", mediaType)
		w.Write(encodeAs(t, mediaType, listPage(first, limit, total)))
	}))
	t.Cleanup(srv.Close)
	return coreClient(t, srv.URL)
}

// clientGoList lists as client-go's typed list does (cache.NewFilteredListWatchFromClient).
func clientGoList(t *testing.T, client rest.Interface, opts metav1.ListOptions) runtime.Object {
	t.Helper()
	obj, err := client.Get().Namespace("ns").Resource("pods").VersionedParams(&opts, metav1.ParameterCodec).Do(context.Background()).Get()
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

// Every page decodes to what client-go's typed list gives for it, in protobuf and in
// JSON; a page is read into the buffer of the page before it, and what was decoded from
// that page stays as it was (nothing decoded refers to the buffer); the buffer is let go
// after the last page.
func TestTypedListerDecodesAsClientGo(t *testing.T) {
	for _, mediaType := range []string{runtime.ContentTypeProtobuf, runtime.ContentTypeJSON} {
		t.Run(mediaType, func(t *testing.T) {
			const total, pageSize = 25, 10
			client := serveList(t, mediaType, total, "")
			l := NewTypedLister(client, "pods", "ns")
			var pages []runtime.Object
			var copies []runtime.Object
			var buffers []*byte
			opts := metav1.ListOptions{Limit: pageSize}
			for {
				page, err := l.List(context.Background(), opts)
				if err != nil {
					t.Fatal(err)
				}
				pages, copies = append(pages, page), append(copies, page.DeepCopyObject())
				want := clientGoList(t, client, opts)
				if !reflect.DeepEqual(page, want) {
					got, want := page.(*corev1.PodList), want.(*corev1.PodList)
					for i := range min(len(got.Items), len(want.Items)) {
						if !reflect.DeepEqual(got.Items[i], want.Items[i]) {
							t.Fatalf("page %d, pod %d:\n%+v\nclient-go's:\n%+v", len(pages), i, got.Items[i], want.Items[i])
						}
					}
					t.Fatalf("page %d: list %+v (%d pods), client-go's %+v (%d pods)", len(pages), got.ListMeta, len(got.Items), want.ListMeta, len(want.Items))
				}
				cont := page.(*corev1.PodList).Continue
				if cont == "" {
					break
				}
				if mediaType == runtime.ContentTypeProtobuf {
					if l.page == nil {
						t.Fatalf("page %d had a continue token, but its buffer was not kept for the next", len(pages))
					}
					buffers = append(buffers, unsafe.SliceData(l.page))
				}
				opts.Continue = cont
			}
			if len(pages) != 3 {
				t.Fatalf("%d pages, want 3", len(pages))
			}
			if l.page != nil {
				t.Error("the buffer is kept after the list's last page")
			}
			if mediaType == runtime.ContentTypeProtobuf && buffers[0] != buffers[1] {
				t.Error("the second page was not read into the first page's buffer")
			}
			for i := range pages {
				if !reflect.DeepEqual(pages[i], copies[i]) {
					t.Errorf("page %d changed once the next pages were read", i+1)
				}
			}
		})
	}
}

// A continue token the server no longer honours is the API's 410 Expired, which client-go's
// pager takes for its cue to list everything at once.
func TestTypedListerExpiredToken(t *testing.T) {
	client := serveList(t, runtime.ContentTypeProtobuf, 25, "10")
	l := NewTypedLister(client, "pods", "ns")
	if _, err := l.List(context.Background(), metav1.ListOptions{Limit: 10}); err != nil {
		t.Fatal(err)
	}
	_, err := l.List(context.Background(), metav1.ListOptions{Limit: 10, Continue: "10"})
	if !apierrors.IsResourceExpired(err) {
		t.Fatalf("error %v, want a 410 Expired", err)
	}
	if l.page != nil {
		t.Error("the buffer is kept after a failed page")
	}
}

func TestUnknownFieldsErrors(t *testing.T) {
	raw := encodeAs(t, runtime.ContentTypeProtobuf, listPage(0, 1, 1))
	body := raw[len(protobufPrefix):]
	if _, _, _, err := unknownFields(body[:len(body)-3]); err == nil {
		t.Error("a truncated message decoded")
	}
	var u runtime.Unknown
	if err := u.Unmarshal(body); err != nil {
		t.Fatal(err)
	}
	u.ContentEncoding = "gzip"
	gz, err := u.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := unknownFields(gz); err == nil || !strings.Contains(err.Error(), "gzip") {
		t.Errorf("a gzip content encoding: error %v", err)
	}
}
