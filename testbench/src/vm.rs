//! The host side of the VFIO VM test: boot Linux in QEMU with a small
//! initramfs that runs one test program, and collect its console.
//!
//! DESIGN NOTES
//! ------------
//! What proves the VFIO backend is a real kernel's VFIO with a real (virtual)
//! IOMMU, not a mock: QEMU's q35 machine with `intel-iommu` gives the guest
//! VT-d, and QEMU's `edu` device is a PCI device with a BAR, a DMA engine and
//! INTx/MSI. The guest program (`vfio-edu-guest`, a binary of this crate, so
//! the normal cargo build makes it) drives edu through `homa_driver`.
//!
//! Nothing here needs a cross toolchain or network beyond apt: the guest
//! kernel and its VFIO modules come from Debian's kernel package (unpacked,
//! not installed, by `testbench/vm/fetch-kernel.sh`, which `make vfio-deps`
//! runs), the shell is busybox-static, and the program is the host's own
//! dynamically linked binary with the shared libraries `ldd` names copied to
//! the same paths, which works because guest and host are both x86-64 glibc.
//! The binary is stripped on the way (its 64 MB of debug info would make the
//! 10 MB initramfs seven times larger, and slower for the guest to unpack).
//!
//! The initramfs is written here as a `newc` cpio archive (the format the
//! kernel unpacks; see the kernel's ramfs-rootfs-initramfs docs), so no cpio
//! tool is needed. Its /init (a busybox script) mounts /proc, /sys and /dev,
//! loads the VFIO modules, runs the program and powers off; the program's
//! last line says PASS or FAIL. QEMU runs under TCG (no KVM needed), and the
//! whole boot is bounded by a timeout: a hung guest is killed and reported
//! with its console.

use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The VFIO modules in load order (each needs the ones before it). Kernels
/// from 6.2 on have no vfio_virqfd (merged into vfio); missing ones are skipped.
pub const VFIO_MODULES: &[&str] = &[
    "irqbypass",
    "vfio",
    "vfio_iommu_type1",
    "vfio_virqfd",
    "vfio-pci-core",
    "vfio-pci",
];

/// What went wrong preparing or running the VM.
#[derive(Debug, thiserror::Error)]
pub enum VmError {
    #[error("no guest kernel in {dir} ({missing} is missing): run `make vfio-deps` (it unpacks Debian's kernel package there)")]
    NoKernel { dir: PathBuf, missing: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("running {program}: {source}")]
    Spawn {
        program: String,
        source: std::io::Error,
    },
    #[error(
        "ldd {path} printed no library it could resolve: is it a dynamically linked x86-64 binary?"
    )]
    Ldd { path: PathBuf },
    #[error("the VM did not finish within {timeout_s} s; console so far:\n{console}")]
    Timeout { timeout_s: u64, console: String },
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> VmError + '_ {
    move |source| VmError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A guest kernel and its VFIO modules, as fetch-kernel.sh lays them out:
/// `DIR/vmlinuz` and `DIR/modules/NAME.ko`.
#[derive(Clone, Debug)]
pub struct GuestKernel {
    pub vmlinuz: PathBuf,
    /// Module files in load order.
    pub modules: Vec<PathBuf>,
}

impl GuestKernel {
    pub fn find(dir: &Path) -> Result<Self, VmError> {
        let vmlinuz = dir.join("vmlinuz");
        if !vmlinuz.is_file() {
            return Err(VmError::NoKernel {
                dir: dir.to_path_buf(),
                missing: "vmlinuz".into(),
            });
        }
        let modules: Vec<PathBuf> = VFIO_MODULES
            .iter()
            .map(|m| dir.join("modules").join(format!("{m}.ko")))
            .filter(|p| p.is_file())
            .collect();
        for needed in ["vfio", "vfio-pci"] {
            if !modules
                .iter()
                .any(|p| p.file_stem().is_some_and(|s| s == needed))
            {
                return Err(VmError::NoKernel {
                    dir: dir.to_path_buf(),
                    missing: format!("modules/{needed}.ko"),
                });
            }
        }
        Ok(GuestKernel { vmlinuz, modules })
    }
}

/// QEMU's x86-64 system emulator, if installed.
pub fn find_qemu() -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("qemu-system-x86_64"))
            .find(|p| p.is_file())
    })
}

/// busybox-static, if installed.
pub fn find_busybox() -> Option<PathBuf> {
    ["/bin/busybox", "/usr/bin/busybox"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
}

/// The shared libraries (and the loader) `binary` needs, as `ldd` resolves them.
pub fn shared_libraries(binary: &Path) -> Result<Vec<PathBuf>, VmError> {
    let out = Command::new("ldd")
        .arg(binary)
        .output()
        .map_err(|source| VmError::Spawn {
            program: "ldd".into(),
            source,
        })?;
    let text = String::from_utf8_lossy(&out.stdout);
    // Lines are "libc.so.6 => /lib/.../libc.so.6 (0x...)" or "/lib64/ld-linux... (0x...)".
    let libs: Vec<PathBuf> = text
        .lines()
        .filter_map(|l| l.split_whitespace().find(|w| w.starts_with('/')))
        .map(PathBuf::from)
        .collect();
    if libs.is_empty() {
        return Err(VmError::Ldd {
            path: binary.to_path_buf(),
        });
    }
    Ok(libs)
}

/// A `newc` cpio archive being written (the kernel's initramfs format).
#[derive(Default)]
pub struct Cpio {
    bytes: Vec<u8>,
    /// Inode numbers handed out (each entry gets its own).
    next_inode: u32,
    /// Directories already written.
    dirs: BTreeSet<String>,
}

/// File type bits of `st_mode`.
const S_IFDIR: u32 = 0o040000;
const S_IFREG: u32 = 0o100000;
const S_IFCHR: u32 = 0o020000;

impl Cpio {
    fn entry(&mut self, name: &str, mode: u32, rdev: (u32, u32), data: &[u8]) {
        self.next_inode += 1;
        let fields = [
            self.next_inode,
            mode,
            0, // uid
            0, // gid
            if mode & S_IFDIR != 0 { 2 } else { 1 },
            0, // mtime
            data.len() as u32,
            0, // dev major
            0, // dev minor
            rdev.0,
            rdev.1,
            name.len() as u32 + 1,
            0, // check (unused by newc)
        ];
        self.bytes.extend_from_slice(b"070701");
        for f in fields {
            self.bytes.extend_from_slice(format!("{f:08x}").as_bytes());
        }
        self.bytes.extend_from_slice(name.as_bytes());
        self.bytes.push(0);
        self.pad();
        self.bytes.extend_from_slice(data);
        self.pad();
    }

    /// Header+name and data are each padded to 4 bytes.
    fn pad(&mut self) {
        while !self.bytes.len().is_multiple_of(4) {
            self.bytes.push(0);
        }
    }

    /// Adds directory `path` (relative, no leading slash) and its parents.
    pub fn dir(&mut self, path: &str) {
        let mut so_far = String::new();
        for part in path.split('/').filter(|p| !p.is_empty()) {
            if !so_far.is_empty() {
                so_far.push('/');
            }
            so_far.push_str(part);
            if self.dirs.insert(so_far.clone()) {
                let name = so_far.clone();
                self.entry(&name, S_IFDIR | 0o755, (0, 0), &[]);
            }
        }
    }

    /// Adds a regular file at `path` (its directories first).
    pub fn file(&mut self, path: &str, mode: u32, data: &[u8]) {
        let path = path.trim_start_matches('/');
        if let Some((parent, _)) = path.rsplit_once('/') {
            self.dir(parent);
        }
        self.entry(path, S_IFREG | mode, (0, 0), data);
    }

    /// Adds a character device node.
    pub fn char_device(&mut self, path: &str, mode: u32, major: u32, minor: u32) {
        let path = path.trim_start_matches('/');
        if let Some((parent, _)) = path.rsplit_once('/') {
            self.dir(parent);
        }
        self.entry(path, S_IFCHR | mode, (major, minor), &[]);
    }

    /// The archive with its trailer.
    pub fn finish(mut self) -> Vec<u8> {
        self.entry("TRAILER!!!", 0, (0, 0), &[]);
        // The kernel reads the archive in 512-byte blocks, as cpio writes it.
        while !self.bytes.len().is_multiple_of(512) {
            self.bytes.push(0);
        }
        self.bytes
    }
}

/// The guest's /init: mount, load modules, run the program, power off.
fn init_script(modules: &[PathBuf], program: &str) -> String {
    let mut s = String::from(
        "#!/bin/busybox sh\n\
         /bin/busybox --install -s /bin\n\
         mount -t proc proc /proc\n\
         mount -t sysfs sysfs /sys\n\
         mount -t devtmpfs devtmpfs /dev\n",
    );
    for m in modules {
        let name = m.file_name().unwrap().to_string_lossy();
        s.push_str(&format!(
            "insmod /lib/modules/{name} || echo \"init: insmod {name} failed\"\n"
        ));
    }
    s.push_str(&format!(
        "echo \"init: modules loaded at $(cut -d' ' -f1 /proc/uptime) s\"\n\
         {program} || dmesg | tail -20\n\
         poweroff -f\n"
    ));
    s
}

/// Reads `path`, stripped of debug info when `strip` is installed.
fn stripped(path: &Path) -> Result<Vec<u8>, VmError> {
    let out = std::env::temp_dir().join(format!(
        "homa-vm-{}-{}",
        std::process::id(),
        path.file_name().unwrap().to_string_lossy()
    ));
    let ok = Command::new("strip")
        .arg("-o")
        .arg(&out)
        .arg(path)
        .status()
        .is_ok_and(|s| s.success());
    let bytes = if ok {
        std::fs::read(&out).map_err(io_error(&out))
    } else {
        std::fs::read(path).map_err(io_error(path))
    };
    let _ = std::fs::remove_file(&out);
    bytes
}

/// The initramfs: busybox, the kernel's VFIO modules, `program` (at
/// /bin/NAME) with its shared libraries, and an /init that runs it.
pub fn build_initramfs(
    kernel: &GuestKernel,
    busybox: &Path,
    program: &Path,
) -> Result<Vec<u8>, VmError> {
    let name = program.file_name().unwrap().to_string_lossy().into_owned();
    build_custom_initramfs(
        busybox,
        &kernel.modules,
        &[program.to_path_buf()],
        &init_script(&kernel.modules, &format!("/bin/{name}")),
    )
}

/// An initramfs with busybox (its applets installed by `init`'s first line,
/// see `init_script`), `modules` at /lib/modules/NAME, each of `programs` at
/// /bin/NAME with the shared libraries it needs, and `init` as /init.
pub fn build_custom_initramfs(
    busybox: &Path,
    modules: &[PathBuf],
    programs: &[PathBuf],
    init: &str,
) -> Result<Vec<u8>, VmError> {
    let mut cpio = Cpio::default();
    for dir in ["dev", "proc", "sys", "run", "tmp", "lib/modules"] {
        cpio.dir(dir);
    }
    cpio.char_device("dev/console", 0o600, 5, 1);
    cpio.file(
        "bin/busybox",
        0o755,
        &std::fs::read(busybox).map_err(io_error(busybox))?,
    );
    for m in modules {
        let name = m.file_name().unwrap().to_string_lossy();
        cpio.file(
            &format!("lib/modules/{name}"),
            0o644,
            &std::fs::read(m).map_err(io_error(m))?,
        );
    }
    let mut libs = BTreeSet::new();
    for program in programs {
        let name = program.file_name().unwrap().to_string_lossy().into_owned();
        cpio.file(&format!("bin/{name}"), 0o755, &stripped(program)?);
        libs.extend(shared_libraries(program)?);
    }
    for lib in libs {
        let canonical = lib.canonicalize().map_err(io_error(&lib))?;
        cpio.file(
            &lib.to_string_lossy(),
            0o755,
            &std::fs::read(&canonical).map_err(io_error(&canonical))?,
        );
    }
    cpio.file("init", 0o755, init.as_bytes());
    Ok(cpio.finish())
}

/// A finished VM run.
#[derive(Debug)]
pub struct VmRun {
    /// Everything the guest printed on its serial console.
    pub console: String,
    /// From QEMU's start to its exit.
    pub wall: Duration,
}

/// Boots `kernel` with `initramfs` (a file) in QEMU: q35, intel-iommu, edu,
/// TCG, 1 GiB, 2 CPUs; waits for the guest to power off, at most `timeout`.
pub fn run_qemu(
    qemu: &Path,
    kernel: &GuestKernel,
    initramfs: &Path,
    timeout: Duration,
) -> Result<VmRun, VmError> {
    let start = Instant::now();
    let mut child = Command::new(qemu)
        .args(["-machine", "q35", "-accel", "tcg", "-m", "1G", "-smp", "2"])
        .args([
            "-nodefaults",
            "-display",
            "none",
            "-serial",
            "stdio",
            "-no-reboot",
        ])
        // Interrupt remapping (intel-iommu's default) lets vfio_iommu_type1
        // accept the container without allow_unsafe_interrupts.
        .args(["-device", "intel-iommu", "-device", "edu"])
        .arg("-kernel")
        .arg(&kernel.vmlinuz)
        .arg("-initrd")
        .arg(initramfs)
        .args(["-append", "console=ttyS0 intel_iommu=on panic=-1 quiet"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| VmError::Spawn {
            program: qemu.display().to_string(),
            source,
        })?;
    let mut stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = stdout.read_to_end(&mut text);
        let _ = stderr.read_to_end(&mut text);
        String::from_utf8_lossy(&text).into_owned()
    });
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if start.elapsed() > timeout => {
                let _ = child.kill();
                let _ = child.wait();
                let console = reader.join().unwrap_or_default();
                return Err(VmError::Timeout {
                    timeout_s: timeout.as_secs(),
                    console,
                });
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(source) => {
                return Err(VmError::Spawn {
                    program: qemu.display().to_string(),
                    source,
                })
            }
        }
    }
    let wall = start.elapsed();
    let console = reader.join().unwrap_or_default();
    Ok(VmRun { console, wall })
}

/// A VM whose console is read while it runs, for tests that act on what the
/// guest prints (start a peer when the guest says it is ready).
pub struct VmSession {
    child: std::process::Child,
    lines: std::sync::mpsc::Receiver<String>,
    /// Every console line so far.
    console: Vec<String>,
    start: Instant,
}

impl VmSession {
    /// Starts `qemu` with `args` (machine, devices, `-kernel`, `-initrd`,
    /// `-append`: all of it but the console, which goes to a pipe).
    pub fn spawn(qemu: &Path, args: &[String]) -> Result<Self, VmError> {
        let start = Instant::now();
        let mut child = Command::new(qemu)
            .args([
                "-nodefaults",
                "-display",
                "none",
                "-serial",
                "stdio",
                "-no-reboot",
            ])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|source| VmError::Spawn {
                program: qemu.display().to_string(),
                source,
            })?;
        let (tx, lines) = std::sync::mpsc::channel();
        let out = child.stdout.take().expect("piped");
        let err = child.stderr.take().expect("piped");
        for stream in [Box::new(out) as Box<dyn Read + Send>, Box::new(err)] {
            let tx = tx.clone();
            std::thread::spawn(move || {
                use std::io::BufRead;
                for line in std::io::BufReader::new(stream).split(b'\n') {
                    let Ok(line) = line else { break };
                    let text = String::from_utf8_lossy(&line)
                        .trim_end_matches('\r')
                        .to_string();
                    if tx.send(text).is_err() {
                        break;
                    }
                }
            });
        }
        Ok(VmSession {
            child,
            lines,
            console: Vec::new(),
            start,
        })
    }

    /// The console so far, one string: the lines waited for and those the
    /// guest printed since (a failure report needs what came after the last
    /// line a test waited for).
    pub fn console(&mut self) -> String {
        while let Ok(line) = self.lines.try_recv() {
            self.console.push(line);
        }
        self.console.join("\n")
    }

    /// Since QEMU started.
    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// Waits for the first console line (from now on) for which `wanted`
    /// holds, and returns it; every line read is kept in the console. Gives
    /// up after `timeout`, or when the guest stops (its console closes).
    pub fn wait_for(
        &mut self,
        wanted: impl Fn(&str) -> bool,
        timeout: Duration,
    ) -> Result<String, VmError> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let hit = wanted(&line);
                    self.console.push(line.clone());
                    if hit {
                        return Ok(line);
                    }
                }
                Err(_) => {
                    return Err(VmError::Timeout {
                        timeout_s: timeout.as_secs(),
                        console: self.console(),
                    })
                }
            }
        }
    }

    /// Waits for the guest to power off (at most `timeout`, then kills it)
    /// and returns its whole console.
    pub fn finish(mut self, timeout: Duration) -> Result<VmRun, VmError> {
        let deadline = Instant::now() + timeout;
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) => break,
                Ok(None) if Instant::now() > deadline => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    while let Ok(line) = self.lines.recv_timeout(Duration::from_millis(200)) {
                        self.console.push(line);
                    }
                    return Err(VmError::Timeout {
                        timeout_s: timeout.as_secs(),
                        console: self.console(),
                    });
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(50)),
                Err(source) => {
                    return Err(VmError::Spawn {
                        program: "qemu".into(),
                        source,
                    })
                }
            }
        }
        // The readers end when QEMU's pipes close.
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(2)) {
            self.console.push(line);
        }
        Ok(VmRun {
            console: self.console(),
            wall: self.start.elapsed(),
        })
    }
}

impl Drop for VmSession {
    /// A session dropped on a failed assertion takes its QEMU with it.
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpio_entries_are_newc_and_aligned() {
        let mut c = Cpio::default();
        c.file("a/b", 0o644, b"xyz");
        let bytes = c.finish();
        assert_eq!(&bytes[..6], b"070701");
        // Directory "a" first, then "a/b" with its 3 bytes, then the trailer.
        let text = String::from_utf8_lossy(&bytes);
        let a = text.find("a\0").unwrap();
        let b = text.find("a/b\0").unwrap();
        assert!(a < b);
        assert_eq!(&bytes[(b + 4).next_multiple_of(4)..][..3], b"xyz");
        assert!(text.contains("TRAILER!!!"));
        assert_eq!(bytes.len() % 512, 0);
    }

    #[test]
    fn init_loads_modules_in_order_then_runs_the_program() {
        let mods = [
            PathBuf::from("/k/modules/vfio.ko"),
            PathBuf::from("/k/modules/vfio-pci.ko"),
        ];
        let s = init_script(&mods, "/bin/t");
        let v = s.find("insmod /lib/modules/vfio.ko").unwrap();
        let p = s.find("insmod /lib/modules/vfio-pci.ko").unwrap();
        let t = s.find("/bin/t ||").unwrap();
        assert!(v < p && p < t && t < s.find("poweroff -f").unwrap());
    }
}
