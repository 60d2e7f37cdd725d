//! How long MiniLM takes: loading, embedding the evaluation tool catalog, and one message.
//! `cargo run --release -p perch-retrieval --example embed_speed -- [MODEL_DIR]`
//! (the folder defaults to `$PERCH_MINILM_DIR`).

use std::path::PathBuf;
use std::time::Instant;

use perch_retrieval::{MiniLm, ToolDoc, ToolIndex};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args()
        .nth(1)
        .or_else(|| std::env::var("PERCH_MINILM_DIR").ok())
        .map(PathBuf::from)
        .ok_or("pass the model folder (or set PERCH_MINILM_DIR)")?;
    let tools_path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/tools.json");
    let tools: Vec<serde_json::Value> = serde_json::from_str(&std::fs::read_to_string(tools_path)?)?;
    let docs: Vec<ToolDoc> = tools
        .iter()
        .map(|t| {
            let s = |k: &str| t[k].as_str().unwrap_or_default().to_owned();
            let args: Vec<&str> =
                t["args"].as_array().into_iter().flatten().filter_map(|a| a.as_str()).collect();
            ToolDoc::from_parts(
                format!("{}__{}", s("server"), s("name")),
                &s("name"),
                &s("description"),
                &args,
            )
        })
        .collect();

    let started = Instant::now();
    let model = MiniLm::load(&dir)?;
    println!("load: {:?}", started.elapsed());

    let texts: Vec<String> = docs.iter().map(|d| d.text.clone()).collect();
    let started = Instant::now();
    model.embed_blocking(&texts)?;
    println!("{} tool descriptions: {:?}", texts.len(), started.elapsed());

    let message = vec!["what files are in my Downloads folder?".to_owned()];
    model.embed_blocking(&message)?;
    let runs = 20;
    let started = Instant::now();
    for _ in 0..runs {
        model.embed_blocking(&message)?;
    }
    println!("one message: {:?}", started.elapsed() / runs);

    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let mut index = ToolIndex::new(docs);
    runtime.block_on(index.warm(&model))?;
    let started = Instant::now();
    let selection = runtime.block_on(index.select(Some(&model), &message[0], 8, &[]))?;
    println!("select (catalog cached): {:?} -> {:?}", started.elapsed(), selection.ids);
    Ok(())
}
