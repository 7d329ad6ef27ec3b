//! The loopback listener behind the scripted stand-ins for outside services (GitHub OAuth, an AI
//! chat endpoint): each connection goes to the service's own handler; dropping it stops accepting.

use std::future::Future;
use std::net::SocketAddr;

use anyhow::Result;
use tokio::net::{TcpListener, TcpStream};

#[derive(Debug)]
pub struct Listener {
    pub addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Listens on a free loopback port and hands every connection to `handler`, each in its own task.
pub async fn listen<F, Fut>(handler: F) -> Result<Listener>
where
    F: Fn(TcpStream) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let task = tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(handler(stream));
        }
    });
    Ok(Listener { addr, task })
}
