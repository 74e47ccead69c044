//! Build script: lets napi-rs set the linker flags a Node.js addon needs.
fn main() {
    napi_build::setup();
}
