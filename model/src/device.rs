//! Where a model runs ([`DeviceChoice`]), and libtorch's threads and CUDA devices.

use tch::Device;

use crate::ModelError;

/// Where a model runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DeviceChoice {
    /// Every CUDA device when there is one, else the CPU.
    #[default]
    Auto,
    /// The CPU.
    Cpu,
    /// A CUDA device by index.
    Cuda(usize),
    /// Every CUDA device of the machine (`cuda`).
    AllCuda,
    /// Several CUDA devices (`cuda:0,cuda:2`): bit `i` set for `cuda:i`.
    CudaSet(u64),
}

/// The most CUDA devices a [`DeviceChoice::CudaSet`] names.
pub const MAX_CUDA_DEVICES: usize = 64;

impl std::fmt::Display for DeviceChoice {
    /// As parsed: `auto`, `cpu`, `cuda`, `cuda:N` or `cuda:N,cuda:M,...`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            DeviceChoice::Auto => f.write_str("auto"),
            DeviceChoice::Cpu => f.write_str("cpu"),
            DeviceChoice::AllCuda => f.write_str("cuda"),
            DeviceChoice::Cuda(i) => write!(f, "cuda:{i}"),
            DeviceChoice::CudaSet(set) => {
                let devices: Vec<String> = (0..MAX_CUDA_DEVICES)
                    .filter(|i| set & (1 << i) != 0)
                    .map(|i| format!("cuda:{i}"))
                    .collect();
                f.write_str(&devices.join(","))
            }
        }
    }
}

zertz_settings::text_setting!(DeviceChoice);

impl std::str::FromStr for DeviceChoice {
    type Err = ModelError;

    /// `auto`, `cpu`, `cuda` (every CUDA device), `cuda:N`, or `cuda:N,cuda:M,...`.
    fn from_str(s: &str) -> Result<DeviceChoice, ModelError> {
        let bad = || {
            ModelError::Device(format!(
                "{s:?} is not a device: use auto, cpu, cuda (every GPU), cuda:N or cuda:N,cuda:M"
            ))
        };
        let one = |part: &str| -> Result<usize, ModelError> {
            match part.trim().strip_prefix("cuda:").map(str::parse::<usize>) {
                Some(Ok(i)) if i < MAX_CUDA_DEVICES => Ok(i),
                _ => Err(bad()),
            }
        };
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(DeviceChoice::Auto),
            "cpu" => Ok(DeviceChoice::Cpu),
            "cuda" | "gpu" => Ok(DeviceChoice::AllCuda),
            list if list.contains(',') => {
                let mut set = 0u64;
                for part in list.split(',') {
                    set |= 1 << one(part)?;
                }
                Ok(if set.count_ones() == 1 {
                    DeviceChoice::Cuda(set.trailing_zeros() as usize)
                } else {
                    DeviceChoice::CudaSet(set)
                })
            }
            other => one(other).map(DeviceChoice::Cuda),
        }
    }
}

impl DeviceChoice {
    /// The device of a job that runs one copy of a network (playing a game, a benchmark): the
    /// first of the devices [`DeviceChoice::resolve_all`] gives.
    pub fn resolve(self) -> Result<Device, ModelError> {
        Ok(self.resolve_all()?[0])
    }

    /// Every device this names, each checked to exist: jobs that spread a network over several
    /// GPUs (self-play, matches) run a copy on each.
    pub fn resolve_all(self) -> Result<Vec<Device>, ModelError> {
        let n = tch::Cuda::device_count().max(0) as usize;
        let check = |i: usize| {
            if i < n {
                Ok(Device::Cuda(i))
            } else {
                Err(ModelError::Device(format!(
                    "cuda:{i} is not available ({n} CUDA devices found)"
                )))
            }
        };
        match self {
            DeviceChoice::Auto if n == 0 => Ok(vec![Device::Cpu]),
            DeviceChoice::Auto => Ok((0..n).map(Device::Cuda).collect()),
            DeviceChoice::Cpu => Ok(vec![Device::Cpu]),
            DeviceChoice::Cuda(i) => Ok(vec![check(i)?]),
            DeviceChoice::AllCuda if n == 0 => {
                Err(ModelError::Device("cuda: no CUDA device is available (0 found)".to_string()))
            }
            DeviceChoice::AllCuda => Ok((0..n).map(Device::Cuda).collect()),
            DeviceChoice::CudaSet(set) => {
                (0..MAX_CUDA_DEVICES).filter(|i| set & (1 << i) != 0).map(check).collect()
            }
        }
    }
}

/// Whether a CUDA device is available to libtorch.
pub fn cuda_available() -> bool {
    tch::Cuda::is_available()
}
