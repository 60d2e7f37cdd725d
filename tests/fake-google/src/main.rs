//! `perch-fake-google [--port N]`: serves the fake Google on loopback for end-to-end tests.
//! Prints its base URL (`http://127.0.0.1:PORT`) on one line when ready; the tests drive it over
//! HTTP under `/test/` (state, consent, expire-access, revoke-all, fail, mint).

use perch_fake_google::FakeGoogle;

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let port = match args.as_slice() {
        [] => 0,
        [flag, port] if flag == "--port" => match port.parse::<u16>() {
            Ok(port) => port,
            Err(_) => usage(),
        },
        _ => usage(),
    };
    let fake = match FakeGoogle::start_on(port).await {
        Ok(fake) => fake,
        Err(e) => {
            eprintln!("perch-fake-google: cannot listen: {e}");
            std::process::exit(1);
        }
    };
    println!("{}", fake.base_url());
    let _ = tokio::signal::ctrl_c().await;
}

fn usage() -> ! {
    eprintln!("usage: perch-fake-google [--port N]");
    std::process::exit(2);
}
