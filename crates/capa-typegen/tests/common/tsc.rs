//! One run of the real TypeScript compiler (`tsc --strict --noEmit`) over many generated files.
//!
//! Each file is a module (`export {};` is prepended), so namespaces of the same name in
//! different files do not clash and each file declares its own `CallOptions`. A canary file with
//! a strict-only error (implicit any) proves that tsc checked the files in strict mode.
//!
//! tsc: `CAPA_TSC` (path to the binary), else `<repo>/node_modules/.bin/tsc`; a missing tsc fails
//! the test unless `CAPA_SKIP_TSC=1`.

use std::path::{Path, PathBuf};
use std::process::Command;

pub(crate) struct Project {
    dir: tempfile::TempDir,
    tsc: PathBuf,
    pub files: usize,
}

/// What tsc reported about the generated files (the canary's own error left out).
pub(crate) struct Checked {
    pub errors: Vec<String>,
    pub stderr: String,
}

impl Project {
    /// `None` when `CAPA_SKIP_TSC=1`; panics with what to do when tsc is missing.
    pub(crate) fn new() -> Option<Project> {
        if std::env::var("CAPA_SKIP_TSC").as_deref() == Ok("1") {
            eprintln!("CAPA_SKIP_TSC=1: not type-checking the generated declarations");
            return None;
        }
        let Some(tsc) = tsc_path() else {
            panic!(
                "tsc not found: set CAPA_TSC to a tsc binary or `npm install` typescript in the \
                 repository (node_modules/.bin/tsc); CAPA_SKIP_TSC=1 skips this test"
            );
        };
        let dir = tempfile::tempdir().expect("temp dir");
        Some(Project { dir, tsc, files: 0 })
    }

    /// Adds `<relative>` (a path ending in `.ts`) holding `text`.
    pub(crate) fn add(&mut self, relative: &str, text: &str) {
        let path = self.dir.path().join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("project dir");
        }
        std::fs::write(&path, format!("export {{}};\n{text}")).expect("write generated file");
        self.files += 1;
    }

    /// Runs tsc once over every file added.
    pub(crate) fn check(self) -> Checked {
        let dir = self.dir.path();
        std::fs::write(
            dir.join("canary.ts"),
            "export function canary(a) { return a; }\n",
        )
        .expect("canary");
        std::fs::write(
            dir.join("tsconfig.json"),
            r#"{
  "compilerOptions": {
    "strict": true,
    "noEmit": true,
    "skipLibCheck": false,
    "target": "ES2022",
    "lib": ["es2022"],
    "types": []
  },
  "include": ["**/*.ts"]
}
"#,
        )
        .expect("tsconfig");
        let output = Command::new(&self.tsc)
            .current_dir(dir)
            .arg("-p")
            .arg(".")
            .arg("--pretty")
            .arg("false")
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", self.tsc.display()));
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            stdout
                .lines()
                .any(|l| l.starts_with("canary.ts(") && l.contains("TS7006")),
            "tsc did not report the canary's implicit any; did it check the files?\n{stdout}"
        );
        let errors: Vec<String> = stdout
            .lines()
            .filter(|l| l.contains("error TS") && !l.starts_with("canary.ts("))
            .map(str::to_owned)
            .collect();
        if !errors.is_empty() && std::env::var_os("CAPA_KEEP_TSC_DIR").is_some() {
            eprintln!("files kept in {}", self.dir.keep().display());
        }
        Checked {
            errors,
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }
}

fn tsc_path() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("CAPA_TSC") {
        return Some(PathBuf::from(path));
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let local = repo.join("node_modules/.bin/tsc");
    local.exists().then_some(local)
}
