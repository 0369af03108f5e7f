// Package kubectl prints objects as kubectl does, from the objects the informers already
// hold: the columns of `kubectl get` (the API server's table printers for built-in types,
// followed line for line; custom resources' additionalPrinterColumns; AGE for any other
// type), pods' STATUS as `kubectl get pods` computes it, ages as kubectl writes them,
// and kubectl's -o templates (custom-columns, jsonpath, go-template), per event.
package kubectl

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
)

// The columns of `kubectl get`, computed from the objects the informers already hold.
//
// kubectl shows what the API server's table printers compute
// (k8s.io/kubernetes/pkg/printers/internalversion, for custom resources the CRD's
// additionalPrinterColumns). That package cannot be imported without the whole kubernetes
// module, and asking the server for Tables instead would change what the informers decode
// (docs/output.md says why we did not), so the printers of the types below are followed
// here line for line, on the v1 types, from kubernetes v1.37.1 (the platform's own types
// in platformTable). Any other type gets NAME and AGE, as most printers end (types the
// server has no printer for get CREATED AT from kubectl instead).
//
// kubectlTable returns the headers after NAME (upper-case, as kubectl prints them) and
// the cells of obj; now stands for the moment kubectl would print (time.Since).
func kubectlTable(obj runtime.Object, now time.Time, wide bool) (headers []string, cells []string, ok bool) {
	since := func(t metav1.Time) string { return timestampSince(now, t) }
	switch o := obj.(type) {
	case *appsv1.Deployment:
		cells = []string{fmt.Sprintf("%d/%d", o.Status.ReadyReplicas, replicasOrOne(o.Spec.Replicas)),
			strconv.Itoa(int(o.Status.UpdatedReplicas)), strconv.Itoa(int(o.Status.AvailableReplicas)), since(o.CreationTimestamp)}
		if wide {
			names, images := containerCells(o.Spec.Template.Spec.Containers)
			cells = append(cells, names, images, selectorCell(o.Spec.Selector))
		}
		return withWide([]string{"READY", "UP-TO-DATE", "AVAILABLE", "AGE"}, wide, "CONTAINERS", "IMAGES", "SELECTOR"), cells, true
	case *appsv1.ReplicaSet:
		cells = []string{strconv.Itoa(int(replicasOrOne(o.Spec.Replicas))), strconv.Itoa(int(o.Status.Replicas)),
			strconv.Itoa(int(o.Status.ReadyReplicas)), since(o.CreationTimestamp)}
		if wide {
			names, images := containerCells(o.Spec.Template.Spec.Containers)
			cells = append(cells, names, images, labelSelectorCell(o.Spec.Selector))
		}
		return withWide([]string{"DESIRED", "CURRENT", "READY", "AGE"}, wide, "CONTAINERS", "IMAGES", "SELECTOR"), cells, true
	case *appsv1.StatefulSet:
		cells = []string{fmt.Sprintf("%d/%d", o.Status.ReadyReplicas, replicasOrOne(o.Spec.Replicas)), since(o.CreationTimestamp)}
		if wide {
			names, images := containerCells(o.Spec.Template.Spec.Containers)
			cells = append(cells, names, images)
		}
		return withWide([]string{"READY", "AGE"}, wide, "CONTAINERS", "IMAGES"), cells, true
	case *appsv1.DaemonSet:
		cells = []string{strconv.Itoa(int(o.Status.DesiredNumberScheduled)), strconv.Itoa(int(o.Status.CurrentNumberScheduled)),
			strconv.Itoa(int(o.Status.NumberReady)), strconv.Itoa(int(o.Status.UpdatedNumberScheduled)),
			strconv.Itoa(int(o.Status.NumberAvailable)), labelsCell(o.Spec.Template.Spec.NodeSelector), since(o.CreationTimestamp)}
		if wide {
			names, images := containerCells(o.Spec.Template.Spec.Containers)
			cells = append(cells, names, images, labelSelectorCell(o.Spec.Selector))
		}
		return withWide([]string{"DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE", "NODE SELECTOR", "AGE"}, wide, "CONTAINERS", "IMAGES", "SELECTOR"), cells, true
	case *batchv1.Job:
		cells = []string{jobStatus(o), jobCompletions(o), jobDuration(o, now), since(o.CreationTimestamp)}
		if wide {
			names, images := containerCells(o.Spec.Template.Spec.Containers)
			cells = append(cells, names, images, labelSelectorCell(o.Spec.Selector))
		}
		return withWide([]string{"STATUS", "COMPLETIONS", "DURATION", "AGE"}, wide, "CONTAINERS", "IMAGES", "SELECTOR"), cells, true
	case *batchv1.CronJob:
		timeZone := "<none>"
		if o.Spec.TimeZone != nil {
			timeZone = *o.Spec.TimeZone
		}
		last := "<none>"
		if o.Status.LastScheduleTime != nil {
			last = since(*o.Status.LastScheduleTime)
		}
		suspend := "<unset>"
		if o.Spec.Suspend != nil {
			suspend = map[bool]string{true: "True", false: "False"}[*o.Spec.Suspend]
		}
		cells = []string{o.Spec.Schedule, timeZone, suspend, strconv.Itoa(len(o.Status.Active)), last, since(o.CreationTimestamp)}
		if wide {
			names, images := containerCells(o.Spec.JobTemplate.Spec.Template.Spec.Containers)
			cells = append(cells, names, images, labelSelectorCell(o.Spec.JobTemplate.Spec.Selector))
		}
		return withWide([]string{"SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST SCHEDULE", "AGE"}, wide, "CONTAINERS", "IMAGES", "SELECTOR"), cells, true
	case *corev1.ReplicationController:
		desired := int32(0)
		if o.Spec.Replicas != nil {
			desired = *o.Spec.Replicas
		}
		cells = []string{strconv.Itoa(int(desired)), strconv.Itoa(int(o.Status.Replicas)), strconv.Itoa(int(o.Status.ReadyReplicas)), since(o.CreationTimestamp)}
		if wide {
			var containers []corev1.Container
			if o.Spec.Template != nil {
				containers = o.Spec.Template.Spec.Containers
			}
			names, images := containerCells(containers)
			cells = append(cells, names, images, labels.FormatLabels(o.Spec.Selector))
		}
		return withWide([]string{"DESIRED", "CURRENT", "READY", "AGE"}, wide, "CONTAINERS", "IMAGES", "SELECTOR"), cells, true
	case *corev1.PersistentVolume:
		return withWide([]string{"CAPACITY", "ACCESS MODES", "RECLAIM POLICY", "STATUS", "CLAIM", "STORAGECLASS", "VOLUMEATTRIBUTESCLASS", "REASON", "AGE"}, wide, "VOLUMEMODE"),
			pvCells(o, now, wide), true
	case *corev1.Service:
		clusterIP := "<none>"
		if len(o.Spec.ClusterIPs) > 0 {
			clusterIP = o.Spec.ClusterIPs[0]
		}
		ports := servicePorts(o.Spec.Ports)
		if ports == "" {
			ports = "<none>"
		}
		cells = []string{string(o.Spec.Type), clusterIP, serviceExternalIP(o, wide), ports, since(o.CreationTimestamp)}
		if wide {
			cells = append(cells, labels.FormatLabels(o.Spec.Selector))
		}
		return withWide([]string{"TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"}, wide, "SELECTOR"), cells, true
	case *networkingv1.Ingress:
		class := "<none>"
		if o.Spec.IngressClassName != nil {
			class = *o.Spec.IngressClassName
		}
		ports := "80"
		if len(o.Spec.TLS) != 0 {
			ports = "80, 443"
		}
		return []string{"CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"},
			[]string{class, ingressHosts(o.Spec.Rules), ingressAddress(o.Status.LoadBalancer, wide), ports, since(o.CreationTimestamp)}, true
	case *corev1.Node:
		return withWide([]string{"STATUS", "ROLES", "AGE", "VERSION"}, wide, "INTERNAL-IP", "EXTERNAL-IP", "OS-IMAGE", "KERNEL-VERSION", "CONTAINER-RUNTIME"),
			nodeCells(o, now, wide), true
	case *corev1.PersistentVolumeClaim:
		return withWide([]string{"STATUS", "VOLUME", "CAPACITY", "ACCESS MODES", "STORAGECLASS", "VOLUMEATTRIBUTESCLASS", "AGE"}, wide, "VOLUMEMODE"),
			pvcCells(o, now, wide), true
	case *corev1.ConfigMap:
		return []string{"DATA", "AGE"}, []string{strconv.Itoa(len(o.Data) + len(o.BinaryData)), since(o.CreationTimestamp)}, true
	case *corev1.Secret:
		return []string{"TYPE", "DATA", "AGE"}, []string{string(o.Type), strconv.Itoa(len(o.Data)), since(o.CreationTimestamp)}, true
	case *unstructured.Unstructured:
		// Secrets are read unstructured, so that their values are redacted before any
		// typed copy exists (internal/informer/redact.go).
		if o.GetKind() == "Secret" && o.GetAPIVersion() == "v1" {
			typ, _ := o.Object["type"].(string)
			data, _ := o.Object["data"].(map[string]any)
			return []string{"TYPE", "DATA", "AGE"}, []string{typ, strconv.Itoa(len(data)), since(o.GetCreationTimestamp())}, true
		}
	case *corev1.Namespace:
		return []string{"STATUS", "AGE"}, []string{string(o.Status.Phase), since(o.CreationTimestamp)}, true
	}
	return platformTable(obj, now, wide)
}

// withWide appends the wide columns' headers when wide.
func withWide(headers []string, wide bool, wideHeaders ...string) []string {
	if wide {
		return append(headers, wideHeaders...)
	}
	return headers
}

// timestampSince is kubectl's translateTimestampSince, at now.
func timestampSince(now time.Time, t metav1.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

var (
	podHeaders     = []string{"READY", "STATUS", "RESTARTS", "AGE"}
	podWideHeaders = []string{"READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED NODE", "READINESS GATES"}
)

// appendPodCells is printPod: READY, STATUS (kubectlPodRow), RESTARTS with when the
// last container restarted, AGE; wide: IP, NODE, NOMINATED NODE, READINESS GATES. Each
// cell is appended to c; nothing is allocated for a pod without unusual reasons.
func appendPodCells(c *Cells, pod *corev1.Pod, now time.Time, wide bool) {
	row := kubectlPodRow(pod)
	c.buf = strconv.AppendInt(c.buf, int64(row.ready), 10)
	c.buf = append(c.buf, '/')
	c.buf = strconv.AppendInt(c.buf, int64(row.total), 10)
	c.end()
	c.add(row.status)
	c.buf = strconv.AppendInt(c.buf, int64(row.restarts), 10)
	if last := lastRestart(pod, row); row.restarts != 0 && !last.IsZero() {
		c.buf = append(c.buf, " ("...)
		c.buf = appendSince(c.buf, now, last)
		c.buf = append(c.buf, " ago)"...)
	}
	c.end()
	c.buf = appendSince(c.buf, now, pod.CreationTimestamp)
	c.end()
	if !wide {
		return
	}
	ip := "<none>"
	if len(pod.Status.PodIPs) > 0 && pod.Status.PodIPs[0].IP != "" {
		ip = pod.Status.PodIPs[0].IP
	}
	c.add(ip)
	c.add(orNone(pod.Spec.NodeName))
	c.add(orNone(pod.Status.NominatedNodeName))
	if len(pod.Spec.ReadinessGates) == 0 {
		c.add("<none>")
		return
	}
	ready := 0
	for _, gate := range pod.Spec.ReadinessGates {
		for _, cond := range pod.Status.Conditions {
			if cond.Type == gate.ConditionType {
				if cond.Status == corev1.ConditionTrue {
					ready++
				}
				break
			}
		}
	}
	c.buf = strconv.AppendInt(c.buf, int64(ready), 10)
	c.buf = append(c.buf, '/')
	c.buf = strconv.AppendInt(c.buf, int64(len(pod.Spec.ReadinessGates)), 10)
	c.end()
}

// lastRestart is when the last counted container restart ended, as printPod finds it:
// the latest lastState.terminated.finishedAt among the containers whose restarts it
// counts (all init containers while initializing, else the sidecars and the app
// containers).
func lastRestart(pod *corev1.Pod, row podRow) metav1.Time {
	var last, sidecarLast metav1.Time
	later := func(latest *metav1.Time, s *corev1.ContainerStatus) {
		if t := s.LastTerminationState.Terminated; t != nil && latest.Before(&t.FinishedAt) {
			*latest = t.FinishedAt
		}
	}
	for i := range pod.Status.InitContainerStatuses {
		s := &pod.Status.InitContainerStatuses[i]
		later(&last, s)
		if isRestartableInitContainer(initContainer(pod, s.Name)) {
			later(&sidecarLast, s)
		}
	}
	if strings.HasPrefix(row.status, "Init:") && !podInitialized(&pod.Status) {
		return last
	}
	last = sidecarLast
	for i := range pod.Status.ContainerStatuses {
		later(&last, &pod.Status.ContainerStatuses[i])
	}
	return last
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// containerCells is layoutContainerCells: the containers' names and images, comma-separated.
func containerCells(containers []corev1.Container) (names, images string) {
	n := make([]string, len(containers))
	im := make([]string, len(containers))
	for i, c := range containers {
		n[i], im[i] = c.Name, c.Image
	}
	return strings.Join(n, ","), strings.Join(im, ",")
}

// selectorCell is a Deployment's selector as printDeployment shows it.
func selectorCell(s *metav1.LabelSelector) string {
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		return "<invalid>"
	}
	return sel.String()
}

// labelSelectorCell is metav1.FormatLabelSelector, which the other workloads use.
func labelSelectorCell(s *metav1.LabelSelector) string { return metav1.FormatLabelSelector(s) }

// labelsCell is labels.FormatLabels: "<none>" for none.
func labelsCell(m map[string]string) string { return labels.FormatLabels(m) }

func jobCondition(job *batchv1.Job, t batchv1.JobConditionType) bool {
	for _, c := range job.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func jobStatus(job *batchv1.Job) string {
	switch {
	case jobCondition(job, batchv1.JobComplete):
		return "Complete"
	case jobCondition(job, batchv1.JobFailed):
		return "Failed"
	case job.DeletionTimestamp != nil:
		return "Terminating"
	case jobCondition(job, batchv1.JobSuspended):
		return "Suspended"
	case jobCondition(job, batchv1.JobFailureTarget):
		return "FailureTarget"
	case jobCondition(job, batchv1.JobSuccessCriteriaMet):
		return "SuccessCriteriaMet"
	}
	return "Running"
}

func jobCompletions(job *batchv1.Job) string {
	if job.Spec.Completions != nil {
		return fmt.Sprintf("%d/%d", job.Status.Succeeded, *job.Spec.Completions)
	}
	parallelism := int32(0)
	if job.Spec.Parallelism != nil {
		parallelism = *job.Spec.Parallelism
	}
	if parallelism > 1 {
		return fmt.Sprintf("%d/1 of %d", job.Status.Succeeded, parallelism)
	}
	return fmt.Sprintf("%d/1", job.Status.Succeeded)
}

func jobDuration(job *batchv1.Job, now time.Time) string {
	switch {
	case job.Status.StartTime == nil:
		return ""
	case job.Status.CompletionTime == nil:
		return duration.HumanDuration(now.Sub(job.Status.StartTime.Time))
	}
	return duration.HumanDuration(job.Status.CompletionTime.Sub(job.Status.StartTime.Time))
}

// loadBalancerWidth is where kubectl cuts load-balancer addresses outside -o wide.
const loadBalancerWidth = 16

// addressesCell joins the sorted, distinct addresses (IP, else hostname), cut to
// loadBalancerWidth unless wide: loadBalancerStatusStringer.
func addressesCell(addresses []string, wide bool) string {
	slices.Sort(addresses)
	addresses = slices.Compact(addresses)
	r := strings.Join(addresses, ",")
	if !wide && len(r) > loadBalancerWidth {
		r = r[:loadBalancerWidth-3] + "..."
	}
	return r
}

func serviceExternalIP(svc *corev1.Service, wide bool) string {
	switch svc.Spec.Type {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort:
		if len(svc.Spec.ExternalIPs) > 0 {
			return strings.Join(svc.Spec.ExternalIPs, ",")
		}
		return "<none>"
	case corev1.ServiceTypeLoadBalancer:
		var addrs []string
		for _, in := range svc.Status.LoadBalancer.Ingress {
			if in.IP != "" {
				addrs = append(addrs, in.IP)
			} else if in.Hostname != "" {
				addrs = append(addrs, in.Hostname)
			}
		}
		lb := addressesCell(addrs, wide)
		if len(svc.Spec.ExternalIPs) > 0 {
			var results []string
			if lb != "" {
				results = append(results, strings.Split(lb, ",")...)
			}
			return strings.Join(append(results, svc.Spec.ExternalIPs...), ",")
		}
		if lb != "" {
			return lb
		}
		return "<pending>"
	case corev1.ServiceTypeExternalName:
		return svc.Spec.ExternalName
	}
	return "<unknown>"
}

func servicePorts(ports []corev1.ServicePort) string {
	pieces := make([]string, len(ports))
	for i, port := range ports {
		pieces[i] = fmt.Sprintf("%d/%s", port.Port, port.Protocol)
		if port.NodePort > 0 {
			pieces[i] = fmt.Sprintf("%d:%d/%s", port.Port, port.NodePort, port.Protocol)
		}
	}
	return strings.Join(pieces, ",")
}

func ingressHosts(rules []networkingv1.IngressRule) string {
	var list []string
	const most = 3
	more := false
	for _, rule := range rules {
		if len(list) == most {
			more = true
		}
		if !more && rule.Host != "" {
			list = append(list, rule.Host)
		}
	}
	if len(list) == 0 {
		return "*"
	}
	ret := strings.Join(list, ",")
	if more {
		return fmt.Sprintf("%s + %d more...", ret, len(rules)-most)
	}
	return ret
}

func ingressAddress(s networkingv1.IngressLoadBalancerStatus, wide bool) string {
	var addrs []string
	for _, in := range s.Ingress {
		if in.IP != "" {
			addrs = append(addrs, in.IP)
		} else if in.Hostname != "" {
			addrs = append(addrs, in.Hostname)
		}
	}
	return addressesCell(addrs, wide)
}

func nodeCells(node *corev1.Node, now time.Time, wide bool) []string {
	var status []string
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			if c.Status == corev1.ConditionTrue {
				status = []string{string(c.Type)}
			} else {
				status = []string{"Not" + string(c.Type)}
			}
		}
	}
	if len(status) == 0 {
		status = []string{"Unknown"}
	}
	if node.Spec.Unschedulable {
		status = append(status, "SchedulingDisabled")
	}
	var roles []string
	for k, v := range node.Labels {
		switch {
		case strings.HasPrefix(k, "node-role.kubernetes.io/"):
			if role := strings.TrimPrefix(k, "node-role.kubernetes.io/"); role != "" {
				roles = append(roles, role)
			}
		case k == "kubernetes.io/role" && v != "":
			roles = append(roles, v)
		}
	}
	slices.Sort(roles)
	roles = slices.Compact(roles)
	rolesCell := strings.Join(roles, ",")
	if rolesCell == "" {
		rolesCell = "<none>"
	}
	info := node.Status.NodeInfo
	cells := []string{strings.Join(status, ","), rolesCell, timestampSince(now, node.CreationTimestamp), info.KubeletVersion}
	if !wide {
		return cells
	}
	orUnknown := func(s string) string {
		if s == "" {
			return "<unknown>"
		}
		return s
	}
	kernel := orUnknown(info.KernelVersion)
	if info.Architecture != "" {
		kernel += " (" + info.Architecture + ")"
	}
	return append(cells, nodeAddress(node, corev1.NodeInternalIP), nodeAddress(node, corev1.NodeExternalIP),
		orUnknown(info.OSImage), kernel, orUnknown(info.ContainerRuntimeVersion))
}

func nodeAddress(node *corev1.Node, t corev1.NodeAddressType) string {
	for _, a := range node.Status.Addresses {
		if a.Type == t {
			return a.Address
		}
	}
	return "<none>"
}

func pvcCells(pvc *corev1.PersistentVolumeClaim, now time.Time, wide bool) []string {
	phase := string(pvc.Status.Phase)
	if pvc.DeletionTimestamp != nil {
		phase = "Terminating"
	}
	vac := orUnset(pvc.Spec.VolumeAttributesClassName)
	capacity, accessModes := "", ""
	if pvc.Spec.VolumeName != "" {
		accessModes = accessModesCell(pvc.Status.AccessModes)
		q := pvc.Status.Capacity[corev1.ResourceStorage]
		capacity = q.String()
	}
	cells := []string{phase, pvc.Spec.VolumeName, capacity, accessModes, pvcClass(pvc), vac, timestampSince(now, pvc.CreationTimestamp)}
	if wide {
		cells = append(cells, orUnset(pvc.Spec.VolumeMode))
	}
	return cells
}

// pvCells is printPersistentVolume.
func pvCells(pv *corev1.PersistentVolume, now time.Time, wide bool) []string {
	claim := ""
	if ref := pv.Spec.ClaimRef; ref != nil {
		claim = ref.Namespace + "/" + ref.Name
	}
	phase := string(pv.Status.Phase)
	if pv.DeletionTimestamp != nil {
		phase = "Terminating"
	}
	vac := orUnset(pv.Spec.VolumeAttributesClassName)
	class := pv.Spec.StorageClassName
	if c, ok := pv.Annotations[corev1.BetaStorageClassAnnotation]; ok {
		class = c
	}
	size := pv.Spec.Capacity[corev1.ResourceStorage]
	cells := []string{size.String(), accessModesCell(pv.Spec.AccessModes), string(pv.Spec.PersistentVolumeReclaimPolicy),
		phase, claim, class, vac, pv.Status.Reason, timestampSince(now, pv.CreationTimestamp)}
	if wide {
		cells = append(cells, orUnset(pv.Spec.VolumeMode))
	}
	return cells
}

// orUnset is *v, or "<unset>" for nil, as kubectl shows optional fields of volumes.
func orUnset[T ~string](v *T) string {
	if v == nil {
		return "<unset>"
	}
	return string(*v)
}

// pvcClass is GetPersistentVolumeClaimClass: the beta annotation wins over the field.
func pvcClass(pvc *corev1.PersistentVolumeClaim) string {
	if class, ok := pvc.Annotations[corev1.BetaStorageClassAnnotation]; ok {
		return class
	}
	if pvc.Spec.StorageClassName != nil {
		return *pvc.Spec.StorageClassName
	}
	return ""
}

// replicasOrOne is spec.replicas, which the API server defaults to 1 when unset.
func replicasOrOne(replicas *int32) int32 {
	if replicas == nil {
		return 1
	}
	return *replicas
}

// accessModesCell is GetAccessModesAsString: RWO, ROX, RWX, RWOP, in that order, once each.
func accessModesCell(modes []corev1.PersistentVolumeAccessMode) string {
	var out []string
	for _, m := range []struct {
		mode  corev1.PersistentVolumeAccessMode
		short string
	}{{corev1.ReadWriteOnce, "RWO"}, {corev1.ReadOnlyMany, "ROX"}, {corev1.ReadWriteMany, "RWX"}, {corev1.ReadWriteOncePod, "RWOP"}} {
		if slices.Contains(modes, m.mode) {
			out = append(out, m.short)
		}
	}
	return strings.Join(out, ",")
}
