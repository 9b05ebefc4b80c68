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
