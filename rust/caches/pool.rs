//! The threads of the caches' file I/O: building, loading and checking documents.

/// The threads that read and write document files. File I/O blocks in the kernel
/// (directory locks, the journal), so more threads than cores keep the disk and the
/// CPUs busy: on 2 cores, 8 threads build about twice as fast as 2.
pub fn io_pool() -> &'static rayon::ThreadPool {
    static POOL: std::sync::OnceLock<rayon::ThreadPool> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
        rayon::ThreadPoolBuilder::new()
            .num_threads((cpus * 4).clamp(4, 32))
            .thread_name(|i| format!("repoctx-io-{i}"))
            .build()
            .expect("an I/O thread pool")
    })
}
