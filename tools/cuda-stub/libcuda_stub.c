// A do-nothing CUDA driver (libcuda.so.1) for measuring spoc's host-side launch cost on a
// machine without a GPU: every call succeeds, memory is host memory, kernels do not run.
// See tools/cuda-stub/README.md. Only the driver functions spoc-runtime calls are here.
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
typedef int CUresult;
typedef void* P;
static int ctx_dummy, mod_dummy, fn_dummy;
static void* current = 0;
CUresult cuInit(unsigned f){return 0;}
CUresult cuDriverGetVersion(int*v){*v=13000;return 0;}
CUresult cuDeviceGetCount(int*c){*c=1;return 0;}
CUresult cuDeviceGet(int*d,int o){*d=0;return 0;}
CUresult cuDeviceGetName(char*n,int len,int d){strncpy(n,"Stub GPU",len);return 0;}
CUresult cuDeviceGetAttribute(int*v,int a,int d){
 switch(a){case 1:*v=1024;break;case 2:case 3:*v=1024;break;case 4:*v=64;break;case 5:*v=2147483647;break;
 case 6:case 7:*v=65535;break;case 8:*v=49152;break;case 10:*v=32;break;case 16:*v=132;break;case 18:*v=0;break;
 case 75:*v=9;break;case 76:*v=0;break;case 97:*v=232448;break;default:*v=1;}
 return 0;}
CUresult cuDeviceTotalMem_v2(size_t*b,int d){*b=(size_t)80<<30;return 0;}
CUresult cuDevicePrimaryCtxRetain(P*c,int d){*c=&ctx_dummy;return 0;}
CUresult cuDevicePrimaryCtxRelease_v2(int d){return 0;}
CUresult cuDevicePrimaryCtxReset_v2(int d){return 0;}
CUresult cuCtxSetCurrent(P c){current=c;return 0;}
CUresult cuCtxGetCurrent(P*c){*c=current;return 0;}
CUresult cuCtxSynchronize(void){return 0;}
CUresult cuModuleLoadDataEx(P*m,const void*img,unsigned n,P o,P v){*m=&mod_dummy;return 0;}
CUresult cuModuleUnload(P m){return 0;}
CUresult cuModuleGetFunction(P*f,P m,const char*name){*f=&fn_dummy;return 0;}
CUresult cuFuncSetAttribute(P f,int a,int v){return 0;}
CUresult cuFuncGetAttribute(int*v,int a,P f){*v=0;return 0;}
CUresult cuMemAlloc_v2(uint64_t*p,size_t b){*p=(uint64_t)malloc(b?b:1);return 0;}
CUresult cuMemFree_v2(uint64_t p){free((void*)p);return 0;}
CUresult cuMemHostAlloc(P*p,size_t b,unsigned f){*p=malloc(b?b:1);return 0;}
CUresult cuMemFreeHost(P p){free(p);return 0;}
CUresult cuMemcpyHtoD_v2(uint64_t d,const void*s,size_t b){memcpy((void*)d,s,b);return 0;}
CUresult cuMemcpyDtoH_v2(void*d,uint64_t s,size_t b){memcpy(d,(void*)s,b);return 0;}
CUresult cuMemcpyDtoD_v2(uint64_t d,uint64_t s,size_t b){memcpy((void*)d,(void*)s,b);return 0;}
CUresult cuMemcpyHtoDAsync_v2(uint64_t d,const void*s,size_t b,P st){memcpy((void*)d,s,b);return 0;}
CUresult cuMemcpyDtoHAsync_v2(void*d,uint64_t s,size_t b,P st){memcpy(d,(void*)s,b);return 0;}
CUresult cuMemsetD8_v2(uint64_t d,unsigned char v,size_t n){memset((void*)d,v,n);return 0;}
CUresult cuStreamCreate(P*s,unsigned f){*s=malloc(8);return 0;}
CUresult cuStreamDestroy_v2(P s){free(s);return 0;}
CUresult cuStreamSynchronize(P s){return 0;}
CUresult cuStreamWaitEvent(P s,P e,unsigned f){return 0;}
CUresult cuStreamBeginCapture_v2(P s,int m){return 1;}
CUresult cuStreamEndCapture(P s,P*g){return 1;}
CUresult cuGraphInstantiateWithFlags(P*e,P g,unsigned long long f){return 1;}
CUresult cuGraphLaunch(P e,P s){return 1;}
CUresult cuGraphDestroy(P g){return 0;}
CUresult cuGraphExecDestroy(P g){return 0;}
CUresult cuEventCreate(P*e,unsigned f){*e=malloc(8);return 0;}
CUresult cuEventDestroy_v2(P e){free(e);return 0;}
CUresult cuEventRecord(P e,P s){return 0;}
CUresult cuEventSynchronize(P e){return 0;}
CUresult cuEventQuery(P e){return 0;}
CUresult cuEventElapsedTime(float*ms,P a,P b){*ms=0.001f;return 0;}
CUresult cuLaunchKernel(P f,unsigned a,unsigned b,unsigned c,unsigned d,unsigned e,unsigned g,unsigned sh,P st,void**params,void**extra){return 0;}
CUresult cuGetErrorName(int r,const char**s){*s="CUDA_ERROR_STUB";return 0;}
CUresult cuGetErrorString(int r,const char**s){*s="stub error";return 0;}
