package kubernetes

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/slotd/slotd/netio/config"
)

// objects are the manifests of this directory, decoded.
type objects struct {
	sts  []*appsv1.StatefulSet
	svcs []*corev1.Service
	cms  []*corev1.ConfigMap
	jobs []*batchv1.Job
	pdbs []*policyv1.PodDisruptionBudget
}

// load decodes every document of every *.yaml file strictly (an unknown or
// misspelt field, a duplicate key, a bad quantity fails) into its API type.
func load(t *testing.T) *objects {
	t.Helper()
	files, err := filepath.Glob("*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	o := &objects{}
	for _, file := range files {
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
		for n := 1; ; n++ {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err, file)
			if len(bytes.TrimSpace(stripComments(doc))) == 0 {
				continue
			}
			var tm metav1.TypeMeta
			require.NoError(t, yaml.Unmarshal(doc, &tm), "%s document %d", file, n)
			var name string
			switch tm.APIVersion + " " + tm.Kind {
			case "apps/v1 StatefulSet":
				name = decode(t, doc, &o.sts)
			case "v1 Service":
				name = decode(t, doc, &o.svcs)
			case "v1 ConfigMap":
				name = decode(t, doc, &o.cms)
			case "batch/v1 Job":
				name = decode(t, doc, &o.jobs)
			case "policy/v1 PodDisruptionBudget":
				name = decode(t, doc, &o.pdbs)
			default:
				t.Fatalf("%s document %d: unexpected %q %q (add its type to this test)", file, n, tm.APIVersion, tm.Kind)
			}
			require.NotEmpty(t, name, "%s document %d has no name", file, n)
		}
	}
	return o
}

// decode decodes doc strictly into a new object appended to list and
// returns its name.
func decode[T any, P interface {
	*T
	metav1.Object
}](t *testing.T, doc []byte, list *[]P) string {
	t.Helper()
	v := P(new(T))
	require.NoError(t, yaml.UnmarshalStrict(doc, v), "%s", doc)
	*list = append(*list, v)
	return v.GetName()
}

func stripComments(doc []byte) []byte {
	var out []byte
	for _, l := range bytes.Split(doc, []byte("\n")) {
		if t := bytes.TrimSpace(l); len(t) > 0 && t[0] != '#' && !bytes.Equal(t, []byte("---")) {
			out = append(out, l...)
			out = append(out, '\n')
		}
	}
	return out
}

func TestManifestsDecodeStrictly(t *testing.T) {
	o := load(t)
	assert.Len(t, o.sts, 1)
	assert.Len(t, o.cms, 1)
	assert.Len(t, o.jobs, 1)
	assert.Len(t, o.pdbs, 1)
	assert.Len(t, o.svcs, 2)
}

func TestStrictDecodingRejectsAMisspeltField(t *testing.T) {
	// The guard the decode test relies on: a typo is an error, not a
	// silently dropped field.
	doc := []byte("apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: x}\nspec:\n  replica: 3\n")
	err := yaml.UnmarshalStrict(doc, &appsv1.StatefulSet{})
	assert.ErrorContains(t, err, `unknown field "replica"`)
}

// The manifests agree with each other: names, selectors, ports, probes,
// volumes, the config slotd loads, and the Job's view of the StatefulSet.
func TestManifestsFitTogether(t *testing.T) {
	o := load(t)
	require.Len(t, o.sts, 1)
	sts := o.sts[0]
	spec := sts.Spec.Template.Spec
	podLabels := labels.Set(sts.Spec.Template.Labels)
	sel, err := metav1.LabelSelectorAsSelector(sts.Spec.Selector)
	require.NoError(t, err)
	assert.True(t, sel.Matches(podLabels), "the StatefulSet's selector matches its pods")
	assert.Equal(t, appsv1.ParallelPodManagement, sts.Spec.PodManagementPolicy,
		"readiness needs the whole cluster: pods must not wait for each other")

	// The headless service behind the stable names.
	var headless *corev1.Service
	for _, s := range o.svcs {
		assert.True(t, labels.SelectorFromSet(s.Spec.Selector).Matches(podLabels), "service %s selects the pods", s.Name)
		if s.Name == sts.Spec.ServiceName {
			headless = s
		}
	}
	require.NotNil(t, headless, "serviceName %q is one of the services", sts.Spec.ServiceName)
	assert.Equal(t, corev1.ClusterIPNone, headless.Spec.ClusterIP)
	assert.True(t, headless.Spec.PublishNotReadyAddresses, "names resolve before the cluster is formed")

	// The PDB covers the pods.
	require.Len(t, o.pdbs, 1)
	pdbSel, err := metav1.LabelSelectorAsSelector(o.pdbs[0].Spec.Selector)
	require.NoError(t, err)
	assert.True(t, pdbSel.Matches(podLabels))
	require.NotNil(t, o.pdbs[0].Spec.MaxUnavailable)
	assert.Equal(t, 1, o.pdbs[0].Spec.MaxUnavailable.IntValue())

	// One pod per Kubernetes node.
	require.NotNil(t, spec.Affinity)
	require.NotNil(t, spec.Affinity.PodAntiAffinity)
	anti := spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	require.Len(t, anti, 1)
	assert.Equal(t, "kubernetes.io/hostname", anti[0].TopologyKey)
	antiSel, err := metav1.LabelSelectorAsSelector(anti[0].LabelSelector)
	require.NoError(t, err)
	assert.True(t, antiSel.Matches(podLabels))

	require.Len(t, spec.Containers, 1)
	c := spec.Containers[0]
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	// Every $(VAR) in the args is defined in the container's env.
	for _, a := range c.Args {
		for _, m := range regexp.MustCompile(`\$\(([A-Z_]+)\)`).FindAllStringSubmatch(a, -1) {
			assert.Contains(t, env, m[1], "args use $(%s)", m[1])
		}
	}
	assert.Equal(t, "metadata.name", env["POD_NAME"].ValueFrom.FieldRef.FieldPath)
	assert.Equal(t, "metadata.namespace", env["POD_NAMESPACE"].ValueFrom.FieldRef.FieldPath)

	// The config file the args name is the ConfigMap's, mounted where
	// the args say; slotd loads it with the per-pod args.
	require.Len(t, o.cms, 1)
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	var cmVolume string
	for _, v := range spec.Volumes {
		if v.ConfigMap != nil {
			assert.Equal(t, o.cms[0].Name, v.ConfigMap.Name)
			cmVolume = v.Name
		}
	}
	require.NotEmpty(t, cmVolume)
	require.NotEmpty(t, c.Args)
	assert.Equal(t, mounts[cmVolume]+"/slotd.conf", c.Args[0])
	conf := o.cms[0].Data["slotd.conf"]
	require.NotEmpty(t, conf)
	// slotd checks that dir exists: load the file with dir pointing at a
	// temporary directory, and check the real value against the volume.
	dirLine := regexp.MustCompile(`(?m)^dir (.*)$`)
	m := dirLine.FindStringSubmatch(conf)
	require.NotNil(t, m, "slotd.conf sets dir")
	dataDir := m[1]
	tmp := t.TempDir()
	path := filepath.Join(tmp, "slotd.conf")
	require.NoError(t, os.WriteFile(path, []byte(dirLine.ReplaceAllString(conf, "dir "+tmp)), 0o644))
	args := []string{path}
	for _, a := range c.Args[1:] {
		args = append(args, strings.NewReplacer("$(POD_NAME)", sts.Name+"-0", "$(POD_NAMESPACE)", "default").Replace(a))
	}
	cfg := config.New()
	require.NoError(t, cfg.LoadArgs(args), "slotd accepts the config and the args")
	assert.True(t, cfg.Bool("cluster-enabled"))
	assert.Equal(t, sts.Name+"-0."+headless.Name+".default.svc.cluster.local", cfg.String("cluster-announce-hostname"),
		"the announced hostname is the pod's stable DNS name")

	// The data volume is a claim template mounted at slotd's dir.
	require.Len(t, sts.Spec.VolumeClaimTemplates, 1)
	claim := sts.Spec.VolumeClaimTemplates[0]
	assert.Equal(t, dataDir, mounts[claim.Name], "nodes.conf and the AOF live on the persistent volume")
	assert.Contains(t, claim.Spec.AccessModes, corev1.ReadWriteOnce)

	// Ports: the client port and the bus port slotd derives from it.
	port := int32(cfg.Int("port"))
	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	assert.Equal(t, port, ports["client"])
	assert.Equal(t, port+10000, ports["bus"], "cluster-port 0: the bus listens on port+10000")
	for _, s := range o.svcs {
		for _, p := range s.Spec.Ports {
			assert.Contains(t, ports, p.TargetPort.String(), "service %s targets a named container port", s.Name)
		}
	}

	// Probes and the pre-stop hook run slotd-probe.
	probe := func(p *corev1.Probe) []string {
		require.NotNil(t, p)
		require.NotNil(t, p.Exec)
		return p.Exec.Command
	}
	assert.Equal(t, []string{"slotd-probe", "ready"}, probe(c.ReadinessProbe), "ready means cluster_state:ok")
	assert.Equal(t, []string{"slotd-probe", "live"}, probe(c.LivenessProbe), "live means serving")
	assert.Equal(t, []string{"slotd-probe", "live"}, probe(c.StartupProbe))
	require.NotNil(t, c.Lifecycle)
	require.NotNil(t, c.Lifecycle.PreStop)
	require.NotNil(t, c.Lifecycle.PreStop.Exec)
	assert.Equal(t, []string{"slotd-probe", "prestop"}, c.Lifecycle.PreStop.Exec.Command)
	require.NotNil(t, spec.TerminationGracePeriodSeconds)
	assert.GreaterOrEqual(t, *spec.TerminationGracePeriodSeconds, int64(30+10),
		"time for the pre-stop failover (30 s) and the shutdown")

	// Guaranteed QoS with whole CPUs; the Go soft memory limit below the
	// container's.
	assert.Equal(t, c.Resources.Requests, c.Resources.Limits)
	cpu := c.Resources.Limits[corev1.ResourceCPU]
	assert.Equal(t, int64(0), cpu.MilliValue()%1000, "whole CPUs")
	memLimit := c.Resources.Limits[corev1.ResourceMemory]
	goLimit := resource.MustParse(strings.TrimSuffix(env["GOMEMLIMIT"].Value, "B"))
	assert.Less(t, goLimit.Value(), memLimit.Value())
	assert.Greater(t, goLimit.Value(), memLimit.Value()*8/10)

	// The Job bootstraps exactly this StatefulSet.
	require.Len(t, o.jobs, 1)
	jc := o.jobs[0].Spec.Template.Spec.Containers
	require.Len(t, jc, 1)
	assert.Equal(t, []string{"slotd-bootstrap"}, jc[0].Command)
	jenv := map[string]string{}
	for _, e := range jc[0].Env {
		jenv[e.Name] = e.Value
	}
	assert.Equal(t, sts.Name, jenv["SLOTD_STATEFULSET"])
	assert.Equal(t, headless.Name, jenv["SLOTD_SERVICE"])
	assert.Equal(t, strconv.Itoa(int(*sts.Spec.Replicas)), jenv["SLOTD_POD_COUNT"])
	assert.Equal(t, strconv.Itoa(int(port)), jenv["SLOTD_PORT"])
	reps, err := strconv.Atoi(jenv["SLOTD_REPLICAS"])
	require.NoError(t, err)
	assert.Zero(t, int(*sts.Spec.Replicas)%(reps+1), "pods split into primaries with %d replicas each", reps)
	assert.GreaterOrEqual(t, int(*sts.Spec.Replicas)/(reps+1), 3, "at least 3 primaries")
	assert.Equal(t, c.Image, jc[0].Image, "one image for the nodes and the Job")
}

// The image holds the scripts under the names the manifests run.
func TestDockerfileInstallsTheScripts(t *testing.T) {
	b, err := os.ReadFile("../Dockerfile")
	require.NoError(t, err)
	df := string(b)
	for script, name := range map[string]string{"probe.sh": "slotd-probe", "bootstrap.sh": "slotd-bootstrap"} {
		assert.Contains(t, df, "COPY deploy/kubernetes/"+script+" /usr/local/bin/"+name)
		st, err := os.Stat(script)
		require.NoError(t, err)
		assert.NotZero(t, st.Mode()&0o111, "%s is executable (COPY keeps the mode)", script)
	}
	assert.Contains(t, df, "./cmd/slotd")
	assert.Contains(t, df, "redis-tools", "the scripts need redis-cli")
}

// The Kubernetes API types are a test-only dependency: the slotd binary
// does not link them.
func TestSlotdDoesNotLinkKubernetes(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/slotd/slotd/cmd/slotd").CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, pkg := range strings.Fields(string(out)) {
		assert.False(t, strings.HasPrefix(pkg, "k8s.io/") || strings.HasPrefix(pkg, "sigs.k8s.io/"),
			"cmd/slotd depends on %s", pkg)
	}
}
