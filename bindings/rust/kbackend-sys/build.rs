//! Finds libkbackend and generates the raw declarations from its header (std only).
//!
//! Library: `KBACKEND_LIB_DIR` (a folder with libkbackend.so), else `pkg-config kbackend`.
//! Header: `KBACKEND_INCLUDE_DIR`, else the repository's `include/` when `KBACKEND_LIB_DIR` is
//! set (a build tree of this source tree) or when pkg-config finds nothing, else pkg-config's
//! `includedir`.
//!
//! The header follows fixed conventions (docs/architecture.md, "The C ABI"): `KB_API` function
//! declarations, `typedef enum` option types, `typedef struct X X` handles, function-pointer
//! typedefs, and fixed-width integer, `size_t`, `double`, `char` and `void` pointer types. A
//! declaration using anything else is skipped with a cargo warning rather than guessed.
use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=KBACKEND_LIB_DIR");
    println!("cargo:rerun-if-env-changed=KBACKEND_INCLUDE_DIR");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let repo_include = manifest.join("../../../include");

    let lib_dir = env::var_os("KBACKEND_LIB_DIR").map(PathBuf::from);
    let pkg = if lib_dir.is_none() { pkg_config() } else { None };
    let lib_dir = match (lib_dir, &pkg) {
        (Some(dir), _) => dir,
        (None, Some(p)) => p.lib_dir.clone(),
        (None, None) => panic!(
            "kbackend-sys: libkbackend not found: set KBACKEND_LIB_DIR to the folder holding \
             libkbackend.so (e.g. the CMake build folder), or install kbackend so that \
             `pkg-config kbackend` finds it"
        ),
    };
    let pkg_include = pkg.as_ref().map(|p| p.include_dir.clone());
    let include_dir = match (env::var_os("KBACKEND_INCLUDE_DIR"), pkg_include) {
        (Some(dir), _) => PathBuf::from(dir),
        (None, Some(dir)) if dir.join("kbackend.h").exists() => dir,
        _ => repo_include,
    };
    let header = include_dir.join("kbackend.h");
    println!("cargo:rerun-if-changed={}", header.display());

    println!("cargo:rustc-link-search=native={}", lib_dir.display());
    println!("cargo:rustc-link-lib=dylib=kbackend");
    // This crate's own tests run without LD_LIBRARY_PATH.
    println!("cargo:rustc-link-arg-tests=-Wl,-rpath,{}", lib_dir.display());
    // Dependents (the kbackend crate) read these as DEP_KBACKEND_LIB_DIR / _INCLUDE_DIR and put
    // the folder in the rpath of their tests and examples.
    println!("cargo:lib_dir={}", lib_dir.display());
    println!("cargo:include_dir={}", include_dir.display());

    let text = fs::read_to_string(&header)
        .unwrap_or_else(|e| panic!("kbackend-sys: cannot read {}: {e}", header.display()));
    let out = PathBuf::from(env::var("OUT_DIR").unwrap()).join("kbackend_sys.rs");
    fs::write(&out, generate(&text)).unwrap();
}

struct PkgConfig {
    lib_dir: PathBuf,
    include_dir: PathBuf,
}

fn pkg_config() -> Option<PkgConfig> {
    let var = |name: &str| -> Option<String> {
        let out =
            Command::new("pkg-config").args(["--variable", name, "kbackend"]).output().ok()?;
        let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
        (out.status.success() && !s.is_empty()).then_some(s)
    };
    Some(PkgConfig { lib_dir: var("libdir")?.into(), include_dir: var("includedir")?.into() })
}

/// The header without comments and preprocessor lines (their `#define` constants kept apart).
fn strip(text: &str) -> (String, Vec<(String, String)>) {
    let mut code = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("/*") {
        code.push_str(&rest[..i]);
        rest = match rest[i..].find("*/") {
            Some(j) => &rest[i + j + 2..],
            None => "",
        };
    }
    code.push_str(rest);
    let mut defines = Vec::new();
    let mut out = String::new();
    for line in code.lines() {
        let line = match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        };
        let t = line.trim();
        if let Some(d) = t.strip_prefix("#define ") {
            let mut parts = d.split_whitespace();
            if let (Some(name), Some(value), None) = (parts.next(), parts.next(), parts.next()) {
                if value.parse::<i64>().is_ok() {
                    defines.push((name.to_string(), value.to_string()));
                }
            }
        } else if !t.starts_with('#') && t != "extern \"C\" {" && t != "}" {
            // (the extern "C" block of C++ compilers is dropped with its closing brace)
            out.push_str(line);
            out.push('\n');
        }
    }
    (out, defines)
}

/// Splits C text into identifiers, numbers and single punctuation characters.
fn tokens(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_alphanumeric()
            || c == '_'
            || (c == '-' && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit()))
        {
            let start = i;
            i += 1;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(chars[start..i].iter().collect());
        } else {
            out.push(c.to_string());
            i += 1;
        }
    }
    out
}

struct Ctx {
    /// Names the header defines as types (handles, enums, callbacks).
    types: Vec<String>,
}

impl Ctx {
    fn base(&self, name: &str) -> Option<&'static str> {
        Some(match name {
            "void" => "::std::ffi::c_void",
            "char" => "::std::ffi::c_char",
            "int" => "::std::ffi::c_int",
            "int8_t" => "i8",
            "int16_t" => "i16",
            "int32_t" => "i32",
            "int64_t" => "i64",
            "uint8_t" => "u8",
            "uint16_t" => "u16",
            "uint32_t" => "u32",
            "uint64_t" => "u64",
            "size_t" => "usize",
            "float" => "f32",
            "double" => "f64",
            _ => return None,
        })
    }

    /// The Rust type of a C type given as tokens (without the parameter name); "" for `void`.
    fn rust_type(&self, toks: &[String]) -> Option<String> {
        let mut base: Option<String> = None;
        let mut base_const = false;
        let mut pointers: Vec<bool> = Vec::new(); // whether each `*` is itself const
        for t in toks {
            match t.as_str() {
                "const" => match pointers.last_mut() {
                    Some(p) => *p = true,
                    None => base_const = true,
                },
                "*" => pointers.push(false),
                "struct" | "enum" => {}
                name => {
                    if base.is_some() {
                        return None; // two base names: not a form this generator knows
                    }
                    base = Some(match self.base(name) {
                        Some(b) => b.to_string(),
                        None if self.types.iter().any(|n| n == name) => name.to_string(),
                        None => return None,
                    });
                }
            }
        }
        let mut ty = base?;
        if pointers.is_empty() && ty == "::std::ffi::c_void" {
            return Some(String::new());
        }
        let mut pointee_const = base_const;
        for is_const in pointers {
            ty = format!("*{} {ty}", if pointee_const { "const" } else { "mut" });
            pointee_const = is_const;
        }
        Some(ty)
    }

    /// "(name: T, ...)" for a C parameter list.
    fn params(&self, text: &str) -> Option<String> {
        let text = text.trim();
        if text == "void" || text.is_empty() {
            return Some(String::new());
        }
        let mut out = Vec::new();
        for (k, p) in text.split(',').enumerate() {
            let toks = tokens(p);
            let last = toks.last()?;
            let named = toks.len() >= 2
                && last != "*"
                && self.base(last).is_none()
                && !self.types.iter().any(|n| n == last);
            let (ty_toks, name) = if named {
                (&toks[..toks.len() - 1], escape(last))
            } else {
                (&toks[..], format!("arg{k}"))
            };
            out.push(format!("{name}: {}", self.rust_type(ty_toks)?));
        }
        Some(out.join(", "))
    }
}

fn escape(name: &str) -> String {
    match name {
        "type" | "fn" | "ref" | "mut" | "move" | "box" | "in" | "loop" | "match" | "self"
        | "impl" | "mod" | "use" | "where" | "async" | "dyn" => format!("r#{name}"),
        _ => name.to_string(),
    }
}

fn generate(text: &str) -> String {
    let (code, defines) = strip(text);
    // Statements: split on ';' at brace depth 0 (enum bodies contain no ';').
    let mut stmts = Vec::new();
    let mut cur = String::new();
    let mut depth = 0;
    for c in code.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ';' if depth == 0 => {
                stmts.push(cur.split_whitespace().collect::<Vec<_>>().join(" "));
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }

    let mut out =
        String::from("// Generated by kbackend-sys/build.rs from kbackend.h: do not edit.\n");
    for (name, value) in &defines {
        if name.starts_with("KB_") && name != "KB_API" {
            writeln!(out, "pub const {name}: i32 = {value};").unwrap();
        }
    }
    let mut ctx = Ctx { types: Vec::new() };
    let mut skipped = Vec::new();
    // First pass: type names, so that later declarations may use them.
    for s in &stmts {
        if let Some(rest) = s.strip_prefix("typedef ") {
            let toks = tokens(rest);
            if rest.starts_with("enum") || rest.starts_with("struct") {
                if let Some(last) = toks.last() {
                    ctx.types.push(last.clone());
                }
            } else if let Some(i) = toks.iter().position(|t| t == "(") {
                if toks.get(i + 1).map(String::as_str) == Some("*") {
                    ctx.types.push(toks[i + 2].clone());
                }
            }
        }
    }
    let mut functions = String::new();
    for s in &stmts {
        if let Some(rest) = s.strip_prefix("typedef enum ") {
            // typedef enum tag { A = 0, B = 1 } name
            let (Some(open), Some(close)) = (rest.find('{'), rest.rfind('}')) else { continue };
            let name = rest[close + 1..].trim();
            writeln!(out, "pub type {name} = ::std::ffi::c_int;").unwrap();
            let mut next = 0i64;
            for entry in rest[open + 1..close].split(',') {
                let entry = entry.trim();
                if entry.is_empty() {
                    continue;
                }
                let (cname, value) = match entry.split_once('=') {
                    Some((n, v)) => (n.trim(), v.trim().parse::<i64>().unwrap_or(next)),
                    None => (entry, next),
                };
                writeln!(out, "pub const {cname}: {name} = {value};").unwrap();
                next = value + 1;
            }
        } else if let Some(rest) = s.strip_prefix("typedef struct ") {
            let name = tokens(rest).last().cloned().unwrap_or_default();
            writeln!(
                out,
                "#[repr(C)]\npub struct {name} {{\n    _private: [u8; 0],\n    \
                 _marker: ::std::marker::PhantomData<(*mut u8, ::std::marker::PhantomPinned)>,\n}}"
            )
            .unwrap();
        } else if let Some(rest) = s.strip_prefix("typedef ") {
            // typedef RET (*NAME)(PARAMS)
            let (Some(a), Some(b)) = (rest.find("(*"), rest.find(')')) else { continue };
            let name = rest[a + 2..b].trim();
            let params_text = &rest[b + 1..];
            let params_text = params_text.trim().trim_start_matches('(').trim_end_matches(')');
            let ret = ctx.rust_type(&tokens(&rest[..a]));
            match (ret, ctx.params(params_text)) {
                (Some(ret), Some(params)) => {
                    let arrow = if ret.is_empty() { String::new() } else { format!(" -> {ret}") };
                    writeln!(
                        out,
                        "pub type {name} = ::std::option::Option<unsafe extern \"C\" fn({params}){arrow}>;"
                    )
                    .unwrap();
                }
                _ => skipped.push(name.to_string()),
            }
        } else if let Some(rest) = s.strip_prefix("KB_API ") {
            let (Some(open), true) = (rest.find('('), rest.ends_with(')')) else { continue };
            let head = tokens(&rest[..open]);
            let Some(name) = head.last() else { continue };
            let ret = ctx.rust_type(&head[..head.len() - 1]);
            match (ret, ctx.params(&rest[open + 1..rest.len() - 1])) {
                (Some(ret), Some(params)) => {
                    let arrow = if ret.is_empty() { String::new() } else { format!(" -> {ret}") };
                    writeln!(functions, "    pub fn {name}({params}){arrow};").unwrap();
                }
                _ => skipped.push(name.to_string()),
            }
        }
    }
    for name in &skipped {
        println!(
            "cargo:warning=kbackend-sys: skipped {name}: a C type this generator does not map"
        );
    }
    writeln!(out, "extern \"C\" {{\n{functions}}}").unwrap();
    out
}
