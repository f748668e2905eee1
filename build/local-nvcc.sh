#!/bin/sh
# local-nvcc.sh: nvcc, ptxas and cuobjdump (CUDA 12.4, Debian trixie's non-free
# packages) unpacked under /opt/cuda124, not installed (no dpkg changes), with wrappers
# in /opt/bin, so that kernels can be compiled and their registers, spills and SASS read
# on this machine before a device call: PATH=/opt/bin:$PATH sh build/ptx-one.sh DIR MODULE,
# then ptxas -arch=sm_90 -v DIR/MODULE.ptx. Its PTX of mmg.cu matched nvcc 13.0's body
# byte for byte (session 31); the committed PTX still comes from the GPU machine.
# Needs the Debian mirror (apt). ~1.1 GB downloaded, ~240 MB kept.
set -eu
W=/tmp/apt-trixie
mkdir -p $W/lists $W/cache $W/debs /opt/cuda124 /opt/bin
echo "deb [trusted=yes] http://deb.debian.org/debian trixie main contrib non-free" >$W/sources.list
A="-o Dir::Etc::SourceList=$W/sources.list -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists=$W/lists -o Dir::Cache=$W/cache"
apt-get $A -o Acquire::Check-Valid-Until=false update >/dev/null
cd $W/debs
apt-get $A download nvidia-cuda-toolkit nvidia-cuda-dev libnvvm4 libcu++-dev >/dev/null 2>&1
for f in nvidia-cuda-toolkit_*.deb libnvvm4_*.deb libcu++-dev_*.deb; do dpkg -x "$f" /opt/cuda124; done
dpkg-deb --fsys-tarfile nvidia-cuda-dev_*.deb | tar -x -C /opt/cuda124 --wildcards './usr/include/*'
B=/opt/cuda124/usr/lib/nvidia-cuda-toolkit/bin
rm -f $B/nvcc.profile
cat >$B/nvcc.profile <<P
NVVMIR_LIBRARY_DIR = /opt/cuda124/usr/lib/nvidia-cuda-toolkit/libdevice
PATH		+= /opt/cuda124/usr/lib/nvidia-cuda-toolkit/bin:/opt/cuda124/usr/bin:
INCLUDES	+= -I/opt/cuda124/usr/include
P
printf '#!/bin/sh\nexec %s/nvcc "$@"\n' $B >/opt/bin/nvcc
chmod +x /opt/bin/nvcc
ln -sf /opt/cuda124/usr/bin/ptxas /opt/bin/ptxas
ln -sf /opt/cuda124/usr/bin/cuobjdump /opt/bin/cuobjdump
cd / && rm -rf $W/debs
/opt/bin/nvcc --version | tail -2
