! libhpctrain's Fortran module: the C API (hpctrain.h) through iso_c_binding, with generic
! interfaces over real32/real64 arrays whose FIRST index is the sample: inputs(n, d_in),
! targets(n, d_out) or targets(n, p, q) (a p x q patch = p*q values), a single sample as a rank-1
! array, and ensembles(n, members, d). The library transposes these column-major arrays itself
! (HPCTRAIN_COL_MAJOR). Every function returns an integer status (HPCTRAIN_OK = 0); the message of
! a failure is hpctrain_last_error(). The communicator is the Fortran integer handle (use mpi).
! The arrays' addresses are passed on, so a contiguous array given by its device address (inside
! !$acc host_data use_device(...)) takes the C API's device path in a CUDA build (hpctrain.h).
module hpctrain
  use iso_c_binding
  implicit none
  private

  integer, parameter, public :: HPCTRAIN_OK = 0, HPCTRAIN_ERR_ARGUMENT = 1, HPCTRAIN_ERR_HANDLE = 2, &
    HPCTRAIN_ERR_DECK = 3, HPCTRAIN_ERR_SHAPE = 4, HPCTRAIN_ERR_EMPTY = 5, HPCTRAIN_ERR_DEVICE = 6, &
    HPCTRAIN_ERR_NONFINITE = 7, HPCTRAIN_ERR_IO = 8, HPCTRAIN_ERR_MPI = 9, HPCTRAIN_ERR_UNSUPPORTED = 10, &
    HPCTRAIN_ERR_INTERNAL = 11
  integer, parameter, public :: HPCTRAIN_DEVICE_CPU = -1
  integer(c_int), parameter :: ROW_MAJOR = 0, COL_MAJOR = 1

  public :: hpctrain_create, hpctrain_create_from_text, hpctrain_destroy, hpctrain_finalize
  public :: hpctrain_push, hpctrain_train, hpctrain_train_if_due, hpctrain_predict, hpctrain_sample
  public :: hpctrain_save_checkpoint, hpctrain_load_checkpoint, hpctrain_buffer_fill, hpctrain_counters
  public :: hpctrain_set_log_file, hpctrain_last_error, hpctrain_version

  ! Samples into the rolling buffer (local).
  interface hpctrain_push
    module procedure push_r4_2, push_r8_2, push_r4_1, push_r8_1, push_r4_3, push_r8_3
  end interface
  ! mlp outputs (local).
  interface hpctrain_predict
    module procedure predict_r4_2, predict_r8_2, predict_r4_1, predict_r8_1
  end interface
  ! diffusion ensembles (local): ensemble(n, members, d), or (members, d) for one context.
  interface hpctrain_sample
    module procedure sample_r4_2, sample_r8_2, sample_r4_1, sample_r8_1
  end interface

  interface
    function c_create(name, path, comm, device, handle) bind(C, name="hpctrain_create_f") result(rc)
      import :: c_char, c_int
      character(kind=c_char), dimension(*), intent(in) :: name, path
      integer(c_int), value :: comm, device
      integer(c_int), intent(out) :: handle
      integer(c_int) :: rc
    end function
    function c_create_from_text(name, text, comm, device, handle) bind(C, name="hpctrain_create_from_text_f") &
        result(rc)
      import :: c_char, c_int
      character(kind=c_char), dimension(*), intent(in) :: name, text
      integer(c_int), value :: comm, device
      integer(c_int), intent(out) :: handle
      integer(c_int) :: rc
    end function
    function c_destroy(handle) bind(C, name="hpctrain_destroy") result(rc)
      import :: c_int
      integer(c_int), value :: handle
      integer(c_int) :: rc
    end function
    function c_finalize() bind(C, name="hpctrain_finalize") result(rc)
      import :: c_int
      integer(c_int) :: rc
    end function
    function c_push_float(handle, x, n, d_in, y, d_out, layout) bind(C, name="hpctrain_push_float") result(rc)
      import :: c_int, c_int64_t, c_float
      integer(c_int), value :: handle, layout
      integer(c_int64_t), value :: n, d_in, d_out
      real(c_float), dimension(*), intent(in) :: x, y
      integer(c_int) :: rc
    end function
    function c_push_double(handle, x, n, d_in, y, d_out, layout) bind(C, name="hpctrain_push_double") result(rc)
      import :: c_int, c_int64_t, c_double
      integer(c_int), value :: handle, layout
      integer(c_int64_t), value :: n, d_in, d_out
      real(c_double), dimension(*), intent(in) :: x, y
      integer(c_int) :: rc
    end function
    function c_train(handle, sim_time, loss) bind(C, name="hpctrain_train") result(rc)
      import :: c_int, c_char, c_double
      integer(c_int), value :: handle
      character(kind=c_char), dimension(*), intent(in) :: sim_time
      real(c_double), intent(out) :: loss
      integer(c_int) :: rc
    end function
    function c_train_if_due(handle, sim_time, ran, loss) bind(C, name="hpctrain_train_if_due") result(rc)
      import :: c_int, c_char, c_double
      integer(c_int), value :: handle
      character(kind=c_char), dimension(*), intent(in) :: sim_time
      integer(c_int), intent(out) :: ran
      real(c_double), intent(out) :: loss
      integer(c_int) :: rc
    end function
    function c_predict_float(handle, x, n, d_in, y, d_out, layout) bind(C, name="hpctrain_predict_float") result(rc)
      import :: c_int, c_int64_t, c_float
      integer(c_int), value :: handle, layout
      integer(c_int64_t), value :: n, d_in, d_out
      real(c_float), dimension(*), intent(in) :: x
      real(c_float), dimension(*), intent(out) :: y
      integer(c_int) :: rc
    end function
    function c_predict_double(handle, x, n, d_in, y, d_out, layout) bind(C, name="hpctrain_predict_double") &
        result(rc)
      import :: c_int, c_int64_t, c_double
      integer(c_int), value :: handle, layout
      integer(c_int64_t), value :: n, d_in, d_out
      real(c_double), dimension(*), intent(in) :: x
      real(c_double), dimension(*), intent(out) :: y
      integer(c_int) :: rc
    end function
    function c_sample_float(handle, c, n, d_in, members, seed, out, d_out, layout) &
        bind(C, name="hpctrain_sample_float") result(rc)
      import :: c_int, c_int64_t, c_float
      integer(c_int), value :: handle, members, layout
      integer(c_int64_t), value :: n, d_in, seed, d_out
      real(c_float), dimension(*), intent(in) :: c
      real(c_float), dimension(*), intent(out) :: out
      integer(c_int) :: rc
    end function
    function c_sample_double(handle, c, n, d_in, members, seed, out, d_out, layout) &
        bind(C, name="hpctrain_sample_double") result(rc)
      import :: c_int, c_int64_t, c_double
      integer(c_int), value :: handle, members, layout
      integer(c_int64_t), value :: n, d_in, seed, d_out
      real(c_double), dimension(*), intent(in) :: c
      real(c_double), dimension(*), intent(out) :: out
      integer(c_int) :: rc
    end function
    function c_save(handle, dir, step, sessions) bind(C, name="hpctrain_save_checkpoint") result(rc)
      import :: c_int, c_char, c_int64_t
      integer(c_int), value :: handle
      character(kind=c_char), dimension(*), intent(in) :: dir
      integer(c_int64_t), intent(out) :: step, sessions
      integer(c_int) :: rc
    end function
    function c_load(handle, path, step, sessions) bind(C, name="hpctrain_load_checkpoint") result(rc)
      import :: c_int, c_char, c_int64_t
      integer(c_int), value :: handle
      character(kind=c_char), dimension(*), intent(in) :: path
      integer(c_int64_t), intent(out) :: step, sessions
      integer(c_int) :: rc
    end function
    function c_buffer_fill(handle, held, capacity, pushed) bind(C, name="hpctrain_buffer_fill") result(rc)
      import :: c_int, c_int64_t
      integer(c_int), value :: handle
      integer(c_int64_t), intent(out) :: held, capacity, pushed
      integer(c_int) :: rc
    end function
    function c_counters(handle, step, sessions, epochs) bind(C, name="hpctrain_counters") result(rc)
      import :: c_int, c_int64_t
      integer(c_int), value :: handle
      integer(c_int64_t), intent(out) :: step, sessions, epochs
      integer(c_int) :: rc
    end function
    function c_set_log_file(handle, path, all_ranks) bind(C, name="hpctrain_set_log_file") result(rc)
      import :: c_int, c_char
      integer(c_int), value :: handle, all_ranks
      character(kind=c_char), dimension(*), intent(in) :: path
      integer(c_int) :: rc
    end function
    function c_last_error() bind(C, name="hpctrain_last_error") result(p)
      import :: c_ptr
      type(c_ptr) :: p
    end function
    function c_version() bind(C, name="hpctrain_version") result(p)
      import :: c_ptr
      type(c_ptr) :: p
    end function
    function c_strlen(s) bind(C, name="strlen") result(n)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_size_t) :: n
    end function
  end interface

contains

  function c_string(s) result(c)
    character(len=*), intent(in) :: s
    character(kind=c_char, len=len_trim(s) + 1) :: c
    c = trim(s) // c_null_char
  end function

  function f_string(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    integer :: i, n
    n = int(c_strlen(p))
    call c_f_pointer(p, chars, [n])
    allocate(character(len=n) :: s)
    do i = 1, n
      s(i:i) = chars(i)
    end do
  end function

  ! The message of this thread's last failed call.
  function hpctrain_last_error() result(s)
    character(len=:), allocatable :: s
    s = f_string(c_last_error())
  end function

  function hpctrain_version() result(s)
    character(len=:), allocatable :: s
    s = f_string(c_version())
  end function

  ! COLLECTIVE. A model from a deck file; comm is a Fortran MPI communicator; device -1 = CPU.
  integer function hpctrain_create(name, deck_path, comm, device, handle) result(rc)
    character(len=*), intent(in) :: name, deck_path
    integer, intent(in) :: comm, device
    integer, intent(out) :: handle
    integer(c_int) :: h
    rc = c_create(c_string(name), c_string(deck_path), int(comm, c_int), int(device, c_int), h)
    handle = h
  end function

  ! COLLECTIVE. A model from deck text (lines separated by new_line('a')).
  integer function hpctrain_create_from_text(name, deck_text, comm, device, handle) result(rc)
    character(len=*), intent(in) :: name, deck_text
    integer, intent(in) :: comm, device
    integer, intent(out) :: handle
    integer(c_int) :: h
    rc = c_create_from_text(c_string(name), c_string(deck_text), int(comm, c_int), int(device, c_int), h)
    handle = h
  end function

  integer function hpctrain_destroy(handle) result(rc)
    integer, intent(in) :: handle
    rc = c_destroy(int(handle, c_int))
  end function

  integer function hpctrain_finalize() result(rc)
    rc = c_finalize()
  end function

  integer function push_r4_2(handle, inputs, targets) result(rc)
    integer, intent(in) :: handle
    real(c_float), intent(in) :: inputs(:, :), targets(:, :)
    rc = c_push_float(int(handle, c_int), inputs, int(size(inputs, 1), c_int64_t), int(size(inputs, 2), c_int64_t), &
                      targets, int(size(targets, 2), c_int64_t), COL_MAJOR)
  end function
  integer function push_r8_2(handle, inputs, targets) result(rc)
    integer, intent(in) :: handle
    real(c_double), intent(in) :: inputs(:, :), targets(:, :)
    rc = c_push_double(int(handle, c_int), inputs, int(size(inputs, 1), c_int64_t), int(size(inputs, 2), c_int64_t), &
                       targets, int(size(targets, 2), c_int64_t), COL_MAJOR)
  end function
  ! One sample: inputs(d_in), targets(d_out).
  integer function push_r4_1(handle, inputs, targets) result(rc)
    integer, intent(in) :: handle
    real(c_float), intent(in) :: inputs(:), targets(:)
    rc = c_push_float(int(handle, c_int), inputs, 1_c_int64_t, int(size(inputs), c_int64_t), &
                      targets, int(size(targets), c_int64_t), ROW_MAJOR)
  end function
  integer function push_r8_1(handle, inputs, targets) result(rc)
    integer, intent(in) :: handle
    real(c_double), intent(in) :: inputs(:), targets(:)
    rc = c_push_double(int(handle, c_int), inputs, 1_c_int64_t, int(size(inputs), c_int64_t), &
                       targets, int(size(targets), c_int64_t), ROW_MAJOR)
  end function
  ! Patches: targets(n, p, q) is (n, p*q) in column-major memory.
  integer function push_r4_3(handle, inputs, targets) result(rc)
    integer, intent(in) :: handle
    real(c_float), intent(in) :: inputs(:, :), targets(:, :, :)
    rc = c_push_float(int(handle, c_int), inputs, int(size(inputs, 1), c_int64_t), int(size(inputs, 2), c_int64_t), &
                      targets, int(size(targets, 2) * size(targets, 3), c_int64_t), COL_MAJOR)
  end function
  integer function push_r8_3(handle, inputs, targets) result(rc)
    integer, intent(in) :: handle
    real(c_double), intent(in) :: inputs(:, :), targets(:, :, :)
    rc = c_push_double(int(handle, c_int), inputs, int(size(inputs, 1), c_int64_t), int(size(inputs, 2), c_int64_t), &
                       targets, int(size(targets, 2) * size(targets, 3), c_int64_t), COL_MAJOR)
  end function

  ! COLLECTIVE. One session; loss = its last epoch's mean loss.
  integer function hpctrain_train(handle, sim_time, loss) result(rc)
    integer, intent(in) :: handle
    character(len=*), intent(in) :: sim_time
    real(c_double), intent(out) :: loss
    rc = c_train(int(handle, c_int), c_string(sim_time), loss)
  end function

  ! COLLECTIVE. A session when the deck's session_trigger says one is due.
  integer function hpctrain_train_if_due(handle, sim_time, ran, loss) result(rc)
    integer, intent(in) :: handle
    character(len=*), intent(in) :: sim_time
    logical, intent(out) :: ran
    real(c_double), intent(out) :: loss
    integer(c_int) :: r
    loss = 0
    rc = c_train_if_due(int(handle, c_int), c_string(sim_time), r, loss)
    ran = r /= 0
  end function

  integer function predict_r4_2(handle, inputs, outputs) result(rc)
    integer, intent(in) :: handle
    real(c_float), intent(in) :: inputs(:, :)
    real(c_float), intent(out) :: outputs(:, :)
    rc = c_predict_float(int(handle, c_int), inputs, int(size(inputs, 1), c_int64_t), &
                         int(size(inputs, 2), c_int64_t), outputs, int(size(outputs, 2), c_int64_t), COL_MAJOR)
  end function
  integer function predict_r8_2(handle, inputs, outputs) result(rc)
    integer, intent(in) :: handle
    real(c_double), intent(in) :: inputs(:, :)
    real(c_double), intent(out) :: outputs(:, :)
    rc = c_predict_double(int(handle, c_int), inputs, int(size(inputs, 1), c_int64_t), &
                          int(size(inputs, 2), c_int64_t), outputs, int(size(outputs, 2), c_int64_t), COL_MAJOR)
  end function
  integer function predict_r4_1(handle, inputs, outputs) result(rc)
    integer, intent(in) :: handle
    real(c_float), intent(in) :: inputs(:)
    real(c_float), intent(out) :: outputs(:)
    rc = c_predict_float(int(handle, c_int), inputs, 1_c_int64_t, int(size(inputs), c_int64_t), outputs, &
                         int(size(outputs), c_int64_t), ROW_MAJOR)
  end function
  integer function predict_r8_1(handle, inputs, outputs) result(rc)
    integer, intent(in) :: handle
    real(c_double), intent(in) :: inputs(:)
    real(c_double), intent(out) :: outputs(:)
    rc = c_predict_double(int(handle, c_int), inputs, 1_c_int64_t, int(size(inputs), c_int64_t), outputs, &
                          int(size(outputs), c_int64_t), ROW_MAJOR)
  end function

  ! contexts(n, d_in) -> ensemble(n, members, d_out); members = size(ensemble, 2).
  integer function sample_r4_2(handle, contexts, seed, ensemble) result(rc)
    integer, intent(in) :: handle
    real(c_float), intent(in) :: contexts(:, :)
    integer, intent(in) :: seed
    real(c_float), intent(out) :: ensemble(:, :, :)
    rc = c_sample_float(int(handle, c_int), contexts, int(size(contexts, 1), c_int64_t), &
                        int(size(contexts, 2), c_int64_t), int(size(ensemble, 2), c_int), int(seed, c_int64_t), &
                        ensemble, int(size(ensemble, 3), c_int64_t), COL_MAJOR)
  end function
  integer function sample_r8_2(handle, contexts, seed, ensemble) result(rc)
    integer, intent(in) :: handle
    real(c_double), intent(in) :: contexts(:, :)
    integer, intent(in) :: seed
    real(c_double), intent(out) :: ensemble(:, :, :)
    rc = c_sample_double(int(handle, c_int), contexts, int(size(contexts, 1), c_int64_t), &
                         int(size(contexts, 2), c_int64_t), int(size(ensemble, 2), c_int), int(seed, c_int64_t), &
                         ensemble, int(size(ensemble, 3), c_int64_t), COL_MAJOR)
  end function
  ! One context(d_in) -> ensemble(members, d_out).
  integer function sample_r4_1(handle, context, seed, ensemble) result(rc)
    integer, intent(in) :: handle
    real(c_float), intent(in) :: context(:)
    integer, intent(in) :: seed
    real(c_float), intent(out) :: ensemble(:, :)
    rc = c_sample_float(int(handle, c_int), context, 1_c_int64_t, int(size(context), c_int64_t), &
                        int(size(ensemble, 1), c_int), int(seed, c_int64_t), ensemble, &
                        int(size(ensemble, 2), c_int64_t), COL_MAJOR)
  end function
  integer function sample_r8_1(handle, context, seed, ensemble) result(rc)
    integer, intent(in) :: handle
    real(c_double), intent(in) :: context(:)
    integer, intent(in) :: seed
    real(c_double), intent(out) :: ensemble(:, :)
    rc = c_sample_double(int(handle, c_int), context, 1_c_int64_t, int(size(context), c_int64_t), &
                         int(size(ensemble, 1), c_int), int(seed, c_int64_t), ensemble, &
                         int(size(ensemble, 2), c_int64_t), COL_MAJOR)
  end function

  ! COLLECTIVE. dir = '' writes to the deck's checkpoint_dir.
  integer function hpctrain_save_checkpoint(handle, dir, global_step, sessions) result(rc)
    integer, intent(in) :: handle
    character(len=*), intent(in) :: dir
    integer(c_int64_t), intent(out) :: global_step, sessions
    rc = c_save(int(handle, c_int), c_string(dir), global_step, sessions)
  end function

  ! COLLECTIVE. A checkpoint file, or the newest in a directory.
  integer function hpctrain_load_checkpoint(handle, path, global_step, sessions) result(rc)
    integer, intent(in) :: handle
    character(len=*), intent(in) :: path
    integer(c_int64_t), intent(out) :: global_step, sessions
    rc = c_load(int(handle, c_int), c_string(path), global_step, sessions)
  end function

  integer function hpctrain_buffer_fill(handle, held, capacity, pushed) result(rc)
    integer, intent(in) :: handle
    integer(c_int64_t), intent(out) :: held, capacity, pushed
    rc = c_buffer_fill(int(handle, c_int), held, capacity, pushed)
  end function

  integer function hpctrain_counters(handle, global_step, sessions, epochs) result(rc)
    integer, intent(in) :: handle
    integer(c_int64_t), intent(out) :: global_step, sessions, epochs
    rc = c_counters(int(handle, c_int), global_step, sessions, epochs)
  end function

  ! Log lines appended to `path` ('' : stdout); rank 0 only unless all_ranks.
  integer function hpctrain_set_log_file(handle, path, all_ranks) result(rc)
    integer, intent(in) :: handle
    character(len=*), intent(in) :: path
    logical, intent(in) :: all_ranks
    integer(c_int) :: a
    a = 0
    if (all_ranks) a = 1
    rc = c_set_log_file(int(handle, c_int), c_string(path), a)
  end function

end module hpctrain
