//! Relative artifact directories. The only test in this binary, because it
//! changes the process working directory.

use std::fs;

use offload_storage::{BlobStore, Bytes, FileStore, ReferenceStyle};

fn name(reference: &str) -> &str {
    reference.rsplit('/').next().unwrap()
}

#[test]
fn relative_directories_and_both_reference_styles() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path().canonicalize().unwrap();
    std::env::set_current_dir(&cwd).unwrap();
    let abs = cwd.to_str().unwrap();

    // Node: path.join('./artifacts', f) === 'artifacts/' + f.
    let dotted = FileStore::new("./artifacts");
    let joined = dotted
        .store("a", Bytes::from_static(b"joined"), "text/plain")
        .unwrap();
    assert_eq!(joined, format!("artifacts/{}", name(&joined)));
    let concat = dotted
        .store_with_style(
            "b",
            Bytes::from_static(b"concat"),
            "application/json",
            ReferenceStyle::Concatenated,
        )
        .unwrap();
    assert_eq!(concat, format!("./artifacts/{}", name(&concat)));
    assert!(cwd.join("artifacts").join(name(&joined)).is_file());

    let slashed = FileStore::new("artifacts/");
    let s_joined = slashed
        .store("c", Bytes::from_static(b"c"), "text/plain")
        .unwrap();
    assert_eq!(s_joined, format!("artifacts/{}", name(&s_joined)));
    let s_concat = slashed
        .store_with_style(
            "d",
            Bytes::from_static(b"d"),
            "text/plain",
            ReferenceStyle::Concatenated,
        )
        .unwrap();
    assert_eq!(s_concat, format!("artifacts/{}", name(&s_concat)));

    let plain = FileStore::new("artifacts");
    let nested = FileStore::new("./x/../artifacts");
    let n_joined = nested
        .store("e", Bytes::from_static(b"e"), "text/plain")
        .unwrap();
    assert_eq!(n_joined, format!("artifacts/{}", name(&n_joined)));

    // Every instance reads every spelling, including absolute ones.
    for store in [&dotted, &slashed, &plain, &nested] {
        for r in [&joined, &concat, &s_joined, &s_concat, &n_joined] {
            let blob = store.retrieve(r).unwrap();
            assert_eq!(
                blob.content,
                fs::read(cwd.join("artifacts").join(name(r))).unwrap()
            );
            let absolute = format!("{abs}/artifacts/{}", name(r));
            assert_eq!(store.retrieve(&absolute).unwrap().content, blob.content);
            assert_eq!(store.retrieve(name(r)).unwrap().content, blob.content);
        }
        assert_eq!(
            store.retrieve(&concat).unwrap().content_type,
            "application/json"
        );
    }

    // An absolute directory accepts the relative spelling of itself.
    let absolute_store = FileStore::new(&format!("{abs}/artifacts"));
    assert_eq!(
        &absolute_store.retrieve(&joined).unwrap().content[..],
        b"joined"
    );
    assert!(absolute_store
        .store("f", Bytes::new(), "text/plain")
        .unwrap()
        .starts_with(&format!("{abs}/artifacts/")));

    // Spellings of other directories are rejected even when a file with the
    // requested name exists there and in the artifact directory.
    let n = name(&joined);
    fs::create_dir_all(cwd.join("artifacts2")).unwrap();
    fs::create_dir_all(cwd.join("artifacts/sub")).unwrap();
    for bait in [
        cwd.join(n),
        cwd.join("artifacts2").join(n),
        cwd.join("artifacts/sub").join(n),
    ] {
        fs::write(bait, "bait").unwrap();
    }
    for r in [
        format!("artifacts2/{n}"),
        format!("./artifacts2/{n}"),
        format!("../{n}"),
        format!("{abs}/{n}"),
        format!("artifacts/sub/{n}"),
        format!("sub/{n}"),
        format!("./artifacts/sub/{n}"),
        format!("{abs}/artifacts2/{n}"),
    ] {
        assert!(dotted.retrieve(&r).unwrap_err().is_not_found(), "{r}");
    }

    // Parent-relative directories.
    fs::create_dir_all(cwd.join("inner")).unwrap();
    std::env::set_current_dir(cwd.join("inner")).unwrap();
    let parent = FileStore::new("../artifacts");
    assert_eq!(
        &parent
            .retrieve(&format!("../artifacts/{}", name(&joined)))
            .unwrap()
            .content[..],
        b"joined"
    );
    let p = parent
        .store("g", Bytes::from_static(b"g"), "text/plain")
        .unwrap();
    assert_eq!(p, format!("../artifacts/{}", name(&p)));
    assert!(parent
        .retrieve(&format!("artifacts/{}", name(&joined)))
        .unwrap_err()
        .is_not_found());
}
