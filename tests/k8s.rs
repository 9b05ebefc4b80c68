//! The Kubernetes manifests: every overlay renders with `kubectl kustomize` and validates
//! strictly against the Kubernetes schemas (`kubernetes-validate`, from PyPI) — no cluster.

use std::path::Path;
use std::process::Command;

fn render(overlay: &str) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("k8s/overlays")
        .join(overlay);
    let out = Command::new("kubectl")
        .arg("kustomize")
        .arg(&dir)
        .output()
        .expect("kubectl must be installed (it renders the overlays; scripts/test installs it)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn validate(overlay: &str, yaml: &str) {
    let file =
        std::env::temp_dir().join(format!("pillarz-k8s-{overlay}-{}.yaml", std::process::id()));
    std::fs::write(&file, yaml).unwrap();
    let out = Command::new("kubernetes-validate")
        .args(["--strict", "--kubernetes-version", "1.33.0"])
        .arg(&file)
        .output()
        .expect("kubernetes-validate must be installed (pip install kubernetes-validate)");
    let _ = std::fs::remove_file(&file);
    assert!(
        out.status.success(),
        "{overlay}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn every_overlay_renders_and_validates() {
    for overlay in ["dev", "prod"] {
        let yaml = render(overlay);
        validate(overlay, &yaml);
        for kind in [
            "kind: Deployment",
            "kind: Service",
            "kind: HorizontalPodAutoscaler",
            "kind: PodDisruptionBudget",
            "kind: ConfigMap",
        ] {
            assert!(yaml.contains(kind), "{overlay} has {kind}");
        }
        for must in [
            "readOnlyRootFilesystem: true",
            "runAsNonRoot: true",
            "path: /healthz/live",
            "path: /healthz/ready",
            "terminationGracePeriodSeconds: 30",
        ] {
            assert!(yaml.contains(must), "{overlay}: {must}");
        }
    }
    let dev = render("dev");
    assert!(dev.contains("kind: StatefulSet") && dev.contains("PILLARZ_REDIS_URL"));
    assert!(dev.contains("replicas: 2"));
    let prod = render("prod");
    assert!(
        !prod.contains("kind: StatefulSet"),
        "prod uses an external Redis"
    );
    assert!(prod.contains("replicas: 3") && prod.contains("maxReplicas: 30"));
}

/// The rendered documents of `overlay`, as JSON (PyYAML parses them: `kubernetes-validate`,
/// which the tests install, depends on it).
fn documents(overlay: &str) -> Vec<serde_json::Value> {
    use std::io::Write;
    let yaml = render(overlay);
    let mut python = Command::new("python3")
        .args([
            "-c",
            "import json, sys, yaml; print(json.dumps(list(yaml.safe_load_all(sys.stdin))))",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3");
    python
        .stdin
        .take()
        .unwrap()
        .write_all(yaml.as_bytes())
        .unwrap();
    let out = python.wait_with_output().unwrap();
    assert!(out.status.success(), "PyYAML could not read {overlay}");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The document of `kind` named `name`.
fn named<'a>(documents: &'a [serde_json::Value], kind: &str, name: &str) -> &'a serde_json::Value {
    documents
        .iter()
        .find(|d| d["kind"] == kind && d["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name}"))
}

/// The one document of `kind`.
fn one<'a>(documents: &'a [serde_json::Value], kind: &str) -> &'a serde_json::Value {
    let mut of_kind = documents.iter().filter(|d| d["kind"] == kind);
    let found = of_kind.next().unwrap_or_else(|| panic!("no {kind}"));
    assert!(of_kind.next().is_none(), "more than one {kind}");
    found
}

/// Whether a selector's `matchLabels` all appear among `labels`.
fn selects(selector: &serde_json::Value, labels: &serde_json::Value) -> bool {
    let wanted = selector["matchLabels"].as_object().expect("matchLabels");
    !wanted.is_empty() && wanted.iter().all(|(k, v)| labels.get(k) == Some(v))
}

/// The development Redis has no password: a NetworkPolicy lets the service's pods, and no
/// other, reach it, on its port only; and its pod is locked down as the service's is.
#[test]
fn only_the_service_reaches_the_development_redis() {
    let dev = documents("dev");
    let policy = named(&dev, "NetworkPolicy", "redis");
    let redis = &one(&dev, "StatefulSet")["spec"]["template"];
    let service = &one(&dev, "Deployment")["spec"]["template"];
    let spec = &policy["spec"];
    assert!(selects(&spec["podSelector"], &redis["metadata"]["labels"]));
    assert!(
        !selects(&spec["podSelector"], &service["metadata"]["labels"]),
        "the policy is Redis's only"
    );
    assert_eq!(
        spec["policyTypes"],
        serde_json::json!(["Ingress", "Egress"])
    );
    let rules = spec["ingress"].as_array().unwrap();
    assert_eq!(rules.len(), 1, "one way in");
    let from = rules[0]["from"].as_array().unwrap();
    assert_eq!(from.len(), 1);
    assert!(
        from[0].get("namespaceSelector").is_none() && from[0].get("ipBlock").is_none(),
        "pods of this namespace only"
    );
    assert!(selects(
        &from[0]["podSelector"],
        &service["metadata"]["labels"]
    ));
    assert!(!selects(
        &from[0]["podSelector"],
        &redis["metadata"]["labels"]
    ));
    assert_eq!(
        rules[0]["ports"],
        serde_json::json!([{"protocol": "TCP", "port": 6379}])
    );
    assert_eq!(spec["egress"], serde_json::json!([]), "Redis calls no one");

    let pod = &redis["spec"];
    assert_eq!(pod["automountServiceAccountToken"], false);
    assert_eq!(
        pod["securityContext"]["seccompProfile"]["type"],
        "RuntimeDefault"
    );
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
}

/// The service's pods trust the `X-Forwarded-For` of the private ranges: a NetworkPolicy lets
/// only the ingress controller's namespace (and the monitoring's) reach them, on their port,
/// so that no other pod can forge an address, in every overlay.
#[test]
fn only_the_ingress_and_monitoring_reach_the_service() {
    for overlay in ["dev", "prod"] {
        let documents = documents(overlay);
        let policy = named(&documents, "NetworkPolicy", "pillarz");
        let service = &one(&documents, "Deployment")["spec"]["template"];
        let spec = &policy["spec"];
        assert!(
            selects(&spec["podSelector"], &service["metadata"]["labels"]),
            "{overlay}: the policy selects the service's pods"
        );
        assert_eq!(spec["policyTypes"], serde_json::json!(["Ingress"]));
        let rules = spec["ingress"].as_array().unwrap();
        assert_eq!(rules.len(), 1, "{overlay}: one way in");
        let namespaces: Vec<&str> = rules[0]["from"]
            .as_array()
            .unwrap()
            .iter()
            .map(|from| {
                assert!(
                    from.get("podSelector").is_none() && from.get("ipBlock").is_none(),
                    "{overlay}: whole namespaces, named: {from}"
                );
                from["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"]
                    .as_str()
                    .unwrap()
            })
            .collect();
        assert_eq!(namespaces, ["ingress-nginx", "monitoring"], "{overlay}");
        assert_eq!(
            rules[0]["ports"],
            serde_json::json!([{"protocol": "TCP", "port": "http"}])
        );
    }
}
