package checker

import "testing"

func TestUserFrames(t *testing.T) {
	frames := []Frame{
		{Func: "libcudart_static_4d8b33a1", Module: "/work/app"},
		{Func: "cudaLaunchKernel", Module: "/work/app"},
		{Func: "__device_stub__Z5scalePf", File: "/usr/local/cuda/targets/x86_64-linux/include/crt/device_functions.h", Line: 2963, Module: "/work/app"},
		{Func: "main", File: "app.cu", Line: 14, Module: "/work/app"},
		{Func: "__libc_start_call_main", Module: "/lib/x86_64-linux-gnu/libc.so.6"},
		{Func: "_start", Module: "/work/app"},
		{Func: "cuLaunchKernel", Module: "/usr/lib/x86_64-linux-gnu/libcuda.so.1"},
		{Func: "cudaFreeAsync", File: "mylib.cu", Line: 3, Module: "/work/app"}, // Has source: the user's own function.
		{Func: "cublasSgemm", Module: "/venv/site-packages/nvidia/cu13/lib/libcublas.so.13"},
		{Func: "at::native::launch", Module: "/venv/site-packages/torch/lib/libtorch_cuda.so"},
		{Func: "_PyEval_EvalFrameDefault", Module: "/usr/bin/python3.12"},
		{Func: "PyObject_Call", Module: "/usr/lib/x86_64-linux-gnu/libpython3.12.so.1.0"},
		{Func: "launch", Module: "/root/.triton/cache/ab/cuda_utils.cpython-312-x86_64-linux-gnu.so"},
		{Func: "helper", Module: "/work/python_helpers.so"}, // Not an interpreter.
	}
	user, folded := userFrames(frames)
	var names []string
	for _, f := range user {
		names = append(names, f.Func)
	}
	want := []string{"main", "cudaFreeAsync", "at::native::launch", "launch", "helper"}
	if len(names) != len(want) || folded != len(frames)-len(want) {
		t.Fatalf("user frames %v (folded %d), want %v", names, folded, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Errorf("frame %d = %s, want %s", i, names[i], want[i])
		}
	}
	if all, n := userFrames(frames[:2]); len(all) != 2 || n != 0 {
		t.Errorf("all-runtime stack: kept %d, folded %d; want every frame kept", len(all), n)
	}
}

func TestDropLaunchStub(t *testing.T) {
	frames := []Frame{
		{Func: "sc_write_spin", File: "common.cuh", Line: 109},
		{Func: "main", File: "app.cu", Line: 18},
	}
	got, folded := dropLaunchStub(frames, "sc_write_spin", 2)
	if len(got) != 1 || got[0].Func != "main" || folded != 3 {
		t.Errorf("got %v, folded %d; want main only, 3 folded", got, folded)
	}
	if got, _ := dropLaunchStub(frames[:1], "sc_write_spin", 0); len(got) != 1 {
		t.Errorf("a stack of only the stub must be kept, got %v", got)
	}
	if got, _ := dropLaunchStub(frames, "", 0); len(got) != 2 {
		t.Errorf("non-launch ops keep their frames, got %v", got)
	}
}

func TestRuntimeAPI(t *testing.T) {
	for _, c := range []struct {
		frames []string
		want   string
	}{
		{[]string{"libcudart_static_4d8b", "cudaMallocAsync", "main"}, "cudaMallocAsync"},
		{[]string{"cudaMallocAsync_ptsz", "main"}, "cudaMallocAsync"},
		{[]string{"libcudart_static_1", "__cudaLaunchKernel", "__device_stub__Z1kPf", "main"}, "cudaLaunchKernel"},
		{[]string{"cudaLaunchKernel_v7000"}, "cudaLaunchKernel"},
		{[]string{"cudaMallocAsync<float>", "main"}, "cudaMallocAsync"},
		{[]string{"cuMemAllocAsync", "main"}, ""}, // The driver API used directly.
		{[]string{"cudaworker", "main"}, ""},
		{nil, ""},
	} {
		var frames []Frame
		for _, f := range c.frames {
			frames = append(frames, Frame{Func: f})
		}
		if got := runtimeAPI(frames); got != c.want {
			t.Errorf("runtimeAPI(%v) = %q, want %q", c.frames, got, c.want)
		}
	}
	if !isDriverAPI("cuMemAllocAsync") || isDriverAPI("cudaMallocAsync") || isDriverAPI("custom") {
		t.Error("isDriverAPI misclassifies")
	}
}

// A Python program's call is placed in the innermost Python function of its
// own code, ahead of the libraries' C++ or Cython frames with source lines
// and of the installed Python libraries it went through; other programs'
// calls at their innermost frame with a source line.
func TestSite(t *testing.T) {
	for _, c := range []struct {
		stack []Frame
		want  string
	}{
		{[]Frame{{Func: "__pyx_f_launch", File: "cupy/driver.cpp", Line: 8369}, {Func: "py::main", File: "train.py"}}, "py::main train.py"},
		{[]Frame{
			{Func: "cuLaunchKernelEx"},
			{Func: "py::CudaLauncher.__call__", File: "/venv/lib/python3.12/site-packages/triton/backends/nvidia/driver.py", Line: 713},
			{Func: "py::Thread.run", File: "/usr/lib/python3.12/threading.py", Line: 1010},
			{Func: "py::<listcomp>", File: "<frozen importlib._bootstrap>", Line: 3},
			{Func: "py::step", File: "train.py", Line: 54},
			{Func: "py::<module>", File: "train.py", Line: 66},
		}, "py::step train.py:54"},
		// All library code: the innermost Python function.
		{[]Frame{
			{Func: "THPVariable_mul", File: "python_variable_methods.cpp", Line: 10},
			{Func: "py::Module._call_impl", File: "/usr/local/lib/python3.12/dist-packages/torch/nn/modules/module.py", Line: 1775},
			{Func: "py::run", File: "/usr/lib/python3.12/runpy.py", Line: 88},
		}, "py::Module._call_impl /usr/local/lib/python3.12/dist-packages/torch/nn/modules/module.py:1775"},
		// A program in a directory named lib/python is the program's.
		{[]Frame{{Func: "py::f", File: "/work/lib/python/tools/f.py", Line: 3}}, "py::f /work/lib/python/tools/f.py:3"},
		{[]Frame{{Func: "at::native::launch"}, {Func: "main", File: "app.cu", Line: 12}}, "main app.cu:12"},
		{[]Frame{{Func: "at::native::launch"}}, "at::native::launch"},
		{nil, "call #7"},
	} {
		op := Op{Seq: 7, Stack: c.stack}
		if got := op.Site(); got != c.want {
			t.Errorf("Site(%v) = %q, want %q", c.stack, got, c.want)
		}
	}
}
