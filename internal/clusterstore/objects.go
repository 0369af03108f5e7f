package clusterstore

import (
	"context"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// objects is the one kind of API object a store keeps its index and shards in: each a
// map of byte values, with its resourceVersion for optimistic concurrency. Errors are the
// API server's (apierrors.IsNotFound, IsConflict, IsAlreadyExists, IsForbidden).
type objects interface {
	get(ctx context.Context, name string) (*object, error)
	// create makes the object; AlreadyExists if there is one.
	create(ctx context.Context, o *object) (rv string, err error)
	// update replaces the object if its resourceVersion is still o.rv: Conflict if not.
	update(ctx context.Context, o *object) (rv string, err error)
	delete(ctx context.Context, name string) error
	// allowed asks whether this user may verb the object name (a
	// SelfSubjectAccessReview); an error when that cannot be asked.
	allowed(ctx context.Context, verb, name string) (bool, error)
}

// allowed asks the API server whether this user may verb the object name of resource
// in namespace.
func allowed(ctx context.Context, client kubernetes.Interface, namespace, resource, verb, name string) (bool, error) {
	review, err := client.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: namespace, Verb: verb, Resource: resource, Name: name}},
	}, metav1.CreateOptions{})
	if err != nil {
		return false, err
	}
	return review.Status.Allowed, nil
}

// object is one Secret or ConfigMap as the store sees it.
type object struct {
	name   string
	rv     string
	labels map[string]string
	// ours says it was made by a store: its Secret type (SecretType), or for a
	// ConfigMap the managed-by label. A store never replaces an object that is not.
	ours bool
	data map[string][]byte
}

// SecretType is the type of the Secrets a store makes: it says what they are, and
// that a store may replace them.
const SecretType corev1.SecretType = "kubeevents.io/checkpoint"

// Labels on every object a store makes.
const (
	ManagedByLabel  = "app.kubernetes.io/managed-by"
	ManagedBy       = "kubeevents"
	CheckpointLabel = "kubeevents.io/checkpoint" // the index's name, when it fits a label value
)

type secrets struct {
	client    kubernetes.Interface
	namespace string
}

func (s secrets) get(ctx context.Context, name string) (*object, error) {
	sec, err := s.client.CoreV1().Secrets(s.namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return &object{name: name, rv: sec.ResourceVersion, labels: sec.Labels, ours: sec.Type == SecretType, data: sec.Data}, nil
}

func (s secrets) secret(o *object) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: o.name, Namespace: s.namespace, ResourceVersion: o.rv, Labels: o.labels},
		Type:       SecretType,
		Data:       o.data,
	}
}

func (s secrets) create(ctx context.Context, o *object) (string, error) {
	sec := s.secret(o)
	sec.ResourceVersion = ""
	made, err := s.client.CoreV1().Secrets(s.namespace).Create(ctx, sec, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	return made.ResourceVersion, nil
}

func (s secrets) update(ctx context.Context, o *object) (string, error) {
	made, err := s.client.CoreV1().Secrets(s.namespace).Update(ctx, s.secret(o), metav1.UpdateOptions{})
	if err != nil {
		return "", err
	}
	return made.ResourceVersion, nil
}

func (s secrets) delete(ctx context.Context, name string) error {
	return s.client.CoreV1().Secrets(s.namespace).Delete(ctx, name, metav1.DeleteOptions{})
}

func (s secrets) allowed(ctx context.Context, verb, name string) (bool, error) {
	return allowed(ctx, s.client, s.namespace, "secrets", verb, name)
}

// configMaps keep the values in binaryData (the shards are gzip).
type configMaps struct {
	client    kubernetes.Interface
	namespace string
}

func (c configMaps) get(ctx context.Context, name string) (*object, error) {
	cm, err := c.client.CoreV1().ConfigMaps(c.namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return &object{name: name, rv: cm.ResourceVersion, labels: cm.Labels, ours: cm.Labels[ManagedByLabel] == ManagedBy, data: cm.BinaryData}, nil
}

func (c configMaps) configMap(o *object) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: o.name, Namespace: c.namespace, ResourceVersion: o.rv, Labels: o.labels},
		BinaryData: o.data,
	}
}

func (c configMaps) create(ctx context.Context, o *object) (string, error) {
	cm := c.configMap(o)
	cm.ResourceVersion = ""
	made, err := c.client.CoreV1().ConfigMaps(c.namespace).Create(ctx, cm, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	return made.ResourceVersion, nil
}

func (c configMaps) update(ctx context.Context, o *object) (string, error) {
	made, err := c.client.CoreV1().ConfigMaps(c.namespace).Update(ctx, c.configMap(o), metav1.UpdateOptions{})
	if err != nil {
		return "", err
	}
	return made.ResourceVersion, nil
}

func (c configMaps) delete(ctx context.Context, name string) error {
	return c.client.CoreV1().ConfigMaps(c.namespace).Delete(ctx, name, metav1.DeleteOptions{})
}

func (c configMaps) allowed(ctx context.Context, verb, name string) (bool, error) {
	return allowed(ctx, c.client, c.namespace, "configmaps", verb, name)
}
