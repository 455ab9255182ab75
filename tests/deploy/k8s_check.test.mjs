// Offline checks of deploy/k8s: every kustomization (base and overlays/*) is rendered with
// `kubectl kustomize`, every object is validated against the Kubernetes schemas
// (kubernetes-models) with unknown fields refused, and what gpureduce relies on is checked:
// probe and metrics ports, GPU limits, the security context, labels and selectors.
// Run by tests/deploy/k8s_check.sh (node --test).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import { Deployment } from "kubernetes-models/apps/v1";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1";
import { Service } from "kubernetes-models/v1";

// GPUREDUCE_K8S_DIR: another copy, to see the checks fail on a broken one.
const k8s = process.env.GPUREDUCE_K8S_DIR ?? join(dirname(fileURLToPath(import.meta.url)), "../../deploy/k8s");
const models = { "apps/v1/Deployment": Deployment, "v1/Service": Service,
                 "policy/v1/PodDisruptionBudget": PodDisruptionBudget };
const kGracePeriodSeconds = 10; // the server's --grace-period default (GPUREDUCE_GRACE_PERIOD)
const labels = { "app.kubernetes.io/name": "gpureduce", "app.kubernetes.io/component": "server" };

function render(dir) {
  const out = execFileSync("kubectl", ["kustomize", dir], { encoding: "utf8" });
  return parseAllDocuments(out).map((doc) => {
    if (doc.errors.length) throw doc.errors[0];
    return doc.toJS();
  });
}

// The schemas allow unknown fields (as the API server does without strict validation), so a
// misspelt field would pass. The validator reads every field its schema knows: hand it proxies
// that record the reads, and a field never read is one the schema does not know.
function unknownFields(object, validate) {
  const proxies = new WeakMap();
  const reports = [];
  const track = (value, path) => {
    if (value === null || typeof value !== "object") return value;
    if (proxies.has(value)) return proxies.get(value);
    const read = new Set();
    const proxy = new Proxy(value, {
      get(target, key, receiver) {
        if (typeof key === "string") read.add(key);
        return track(Reflect.get(target, key, receiver), `${path}.${String(key)}`);
      },
    });
    proxies.set(value, proxy);
    reports.push(() => Object.keys(value).filter((k) => !read.has(k)).map((k) => `${path}.${k}`));
    return proxy;
  };
  validate.call(track(object, ""));
  return reports.flatMap((report) => report());
}

const portOf = (address) => Number(address.split(":").pop());
const env = (container, name) => container.env?.find((e) => e.name === name)?.value;
const matches = (selector, podLabels) =>
  Object.entries(selector).every(([k, v]) => podLabels[k] === v);

const overlays = readdirSync(join(k8s, "overlays"));
for (const name of ["base", ...overlays.map((o) => `overlays/${o}`)]) {
  describe(name, () => {
    let objects;
    try {
      objects = render(join(k8s, name));
    } catch (error) {
      test("renders with kubectl kustomize", () => { throw error; }); // counted as a failure
      return;
    }
    test("renders with kubectl kustomize", () => {});
    const deployment = objects.find((o) => o.kind === "Deployment");
    const pod = deployment.spec.template;
    const container = pod.spec.containers.find((c) => c.name === "gpureduce");
    const port = (portName) => container.ports.find((p) => p.name === portName)?.containerPort;

    test("every object is valid against the Kubernetes schemas, with no unknown field", () => {
      for (const object of objects) {
        const Model = models[`${object.apiVersion}/${object.kind}`];
        assert.ok(Model, `no schema for ${object.apiVersion} ${object.kind}`);
        const where = `${object.kind}/${object.metadata.name}`;
        assert.deepEqual(unknownFields(object, Model.prototype.validate), [], `${where}: unknown fields`);
      }
    });

    test("the probes and the metrics annotation use the ports the server listens on", () => {
      assert.equal(port("grpc"), portOf(env(container, "GPUREDUCE_LISTEN")));
      assert.equal(port("metrics"), portOf(env(container, "GPUREDUCE_METRICS_LISTEN")));
      for (const probe of ["startupProbe", "readinessProbe", "livenessProbe"]) {
        assert.equal(container[probe]?.grpc?.port, port("grpc"), `${probe} is a gRPC probe on grpc`);
      }
      const annotations = pod.metadata.annotations;
      assert.equal(annotations["prometheus.io/scrape"], "true");
      assert.equal(Number(annotations["prometheus.io/port"]), port("metrics"));
      assert.equal(annotations["prometheus.io/path"], "/metrics");
    });

    test("the GPU is asked for on GPU nodes only", () => {
      const gpus = container.resources?.limits?.["nvidia.com/gpu"];
      const tolerations = JSON.stringify(pod.spec.tolerations ?? []);
      if (name === "overlays/cpu") {
        assert.equal(gpus, undefined, "no nvidia.com/gpu limit");
        assert.ok(!/nvidia/.test(JSON.stringify(container.resources)), "no NVIDIA resource");
        assert.ok(!/nvidia/.test(tolerations), "no NVIDIA toleration");
        assert.equal(pod.spec.nodeSelector, undefined);
        assert.equal(pod.spec.affinity, undefined);
        assert.equal(env(container, "GPUREDUCE_BACKEND"), "cpu");
        assert.equal(env(container, "NVIDIA_VISIBLE_DEVICES"), "void");
      } else {
        assert.equal(gpus, 1, "one nvidia.com/gpu per pod");
        assert.match(tolerations, /nvidia\.com\/gpu/);
        if (name === "overlays/gpu") assert.equal(env(container, "GPUREDUCE_BACKEND"), "cuda");
      }
      for (const kind of ["requests", "limits"]) {
        assert.ok(container.resources[kind].cpu && container.resources[kind].memory, `${kind}: cpu, memory`);
      }
    });

    test("it runs as non-root on a read-only root filesystem, with no capability", () => {
      const podSecurity = pod.spec.securityContext;
      const security = container.securityContext;
      assert.equal(podSecurity.runAsNonRoot, true);
      assert.ok(podSecurity.runAsUser > 0, "a non-zero runAsUser");
      assert.equal(security.readOnlyRootFilesystem, true);
      assert.equal(security.allowPrivilegeEscalation, false);
      assert.notEqual(security.privileged, true);
      assert.deepEqual(security.capabilities.drop, ["ALL"]);
      assert.equal(security.capabilities.add, undefined);
    });

    test("termination waits for preStop and the server's drain", () => {
      const preStop = container.lifecycle?.preStop?.exec?.command ?? [];
      const sleep = preStop[0] === "sleep" ? Number(preStop[1]) : 0;
      const setting = env(container, "GPUREDUCE_GRACE_PERIOD"); // "30s", where an overlay sets it
      const grace = setting ? Number(setting.replace(/s$/, "")) : kGracePeriodSeconds;
      assert.ok(!Number.isNaN(grace), `GPUREDUCE_GRACE_PERIOD=${setting}: write it in seconds`);
      assert.ok(pod.spec.terminationGracePeriodSeconds > sleep + grace,
                `terminationGracePeriodSeconds > ${sleep} + ${grace}`);
    });

    test("labels and selectors agree", () => {
      assert.deepEqual(deployment.spec.selector.matchLabels, labels);
      assert.ok(matches(deployment.spec.selector.matchLabels, pod.metadata.labels));
      const services = objects.filter((o) => o.kind === "Service");
      assert.deepEqual(services.map((s) => s.metadata.name).sort(), ["gpureduce", "gpureduce-headless"]);
      for (const service of services) {
        assert.ok(matches(service.spec.selector, pod.metadata.labels), `${service.metadata.name} selects the pods`);
        for (const p of service.spec.ports) {
          assert.ok(port(p.targetPort), `${service.metadata.name}: targetPort ${p.targetPort} is a container port`);
        }
      }
      const headless = services.find((s) => s.metadata.name === "gpureduce-headless");
      assert.equal(headless.spec.clusterIP, "None");
      const pdb = objects.find((o) => o.kind === "PodDisruptionBudget");
      assert.ok(matches(pdb.spec.selector.matchLabels, pod.metadata.labels), "the PDB selects the pods");
      assert.ok(pdb.spec.minAvailable < deployment.spec.replicas, "a PDB that lets a node drain");
      assert.match(container.image, /^gpureduce:/);
    });
  });
}
