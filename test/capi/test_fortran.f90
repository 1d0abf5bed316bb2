! The Fortran module's generic interfaces: real32/real64 pushes of rank 1, 2 and 3 arrays,
! predictions and ensembles of rank-2 (column-major, transposed by the library) against rank-1
! single-sample calls (no transpose), error statuses and messages. Exit status 1 on any failure.
program test_fortran
  use mpi
  use iso_c_binding, only: c_int64_t
  use hpctrain
  implicit none
  integer, parameter :: n = 6
  character(len=*), parameter :: nl = new_line('a')
  integer :: ierr, h, d, failures, i, j
  real(4) :: x4(n, 3), y4(n, 2), p4(2)
  real(8) :: x8(n, 3), y8(n, 2), y83(n, 1, 2), p8(n, 2), loss, ens(2, 4, 2), ens1(4, 2)
  integer(c_int64_t) :: held, capacity, pushed
  failures = 0
  call MPI_Init(ierr)
  do i = 1, n
    do j = 1, 3
      x8(i, j) = sin(0.3d0 * i + j)
    end do
    y8(i, 1) = x8(i, 1) * x8(i, 2)
    y8(i, 2) = x8(i, 3) - 0.5d0
  end do
  x4 = real(x8, 4)
  y4 = real(y8, 4)
  y83(:, 1, :) = y8
  call expect(hpctrain_create_from_text("f", "model mlp" // nl // "hidden_sizes 8" // nl // "batch_size 4" // nl // &
              "input_width 3" // nl // "target_width 2" // nl // "session_epochs 3" // nl, MPI_COMM_WORLD, &
              HPCTRAIN_DEVICE_CPU, h) == HPCTRAIN_OK, "create")
  call expect(hpctrain_set_log_file(h, "scratch_fortran_log.txt", .false.) == HPCTRAIN_OK, "log file")
  call expect(hpctrain_push(h, x4, y4) == HPCTRAIN_OK, "push real32 rank 2")
  call expect(hpctrain_push(h, x8, y8) == HPCTRAIN_OK, "push real64 rank 2")
  call expect(hpctrain_push(h, x8, y83) == HPCTRAIN_OK, "push real64 rank 3 targets")
  call expect(hpctrain_push(h, x4(1, :), y4(1, :)) == HPCTRAIN_OK, "push real32 rank 1")
  call expect(hpctrain_push(h, x8(2, :), y8(2, :)) == HPCTRAIN_OK, "push real64 rank 1")
  call expect(hpctrain_buffer_fill(h, held, capacity, pushed) == HPCTRAIN_OK, "buffer fill")
  call expect(held == 3 * n + 2 .and. pushed == 3 * n + 2, "buffer holds every pushed sample")
  call expect(hpctrain_train(h, "t0", loss) == HPCTRAIN_OK, "train")
  call expect(loss == loss .and. loss >= 0, "finite loss")
  ! Rank-2 (column-major) predictions against rank-1 single-sample ones, row by row.
  call expect(hpctrain_predict(h, x8, p8) == HPCTRAIN_OK, "predict real64 rank 2")
  do i = 1, n
    call expect(hpctrain_predict(h, x4(i, :), p4) == HPCTRAIN_OK, "predict real32 rank 1")
    call expect(all(real(p8(i, :), 4) == p4), "the transpose matches the single-sample path")
  end do
  ! Errors: a status and a message, and the program goes on.
  call expect(hpctrain_push(h, x8(:, 1:2), y8) == HPCTRAIN_ERR_SHAPE, "push of the wrong width")
  call expect(index(hpctrain_last_error(), "input_width") > 0, "shape message")
  call expect(hpctrain_sample(h, x8(1, :), 1, ens1) == HPCTRAIN_ERR_UNSUPPORTED, "sample on an mlp")
  call expect(hpctrain_destroy(h) == HPCTRAIN_OK, "destroy")
  call expect(hpctrain_push(h, x8, y8) == HPCTRAIN_ERR_HANDLE, "push to a destroyed model")
  call expect(len(hpctrain_last_error()) > 0, "handle message")
  ! A diffusion model: a rank-2 ensemble's first context equals the rank-1 call's ensemble.
  call expect(hpctrain_create_from_text("d", "model diffusion" // nl // "diffusion_hidden 8" // nl // &
              "time_embedding_dim 4" // nl // "diffusion_steps 5" // nl // "batch_size 4" // nl // &
              "input_width 3" // nl // "target_width 2" // nl, MPI_COMM_WORLD, -1, d) == HPCTRAIN_OK, "create diffusion")
  call expect(hpctrain_set_log_file(d, "scratch_fortran_log.txt", .false.) == HPCTRAIN_OK, "log file")
  call expect(hpctrain_push(d, x8, y8) == HPCTRAIN_OK, "push diffusion")
  call expect(hpctrain_train(d, "t0", loss) == HPCTRAIN_OK, "train diffusion")
  call expect(hpctrain_sample(d, x8(1:2, :), 3, ens) == HPCTRAIN_OK, "sample real64 rank 2")
  call expect(hpctrain_sample(d, x8(1, :), 3, ens1) == HPCTRAIN_OK, "sample real64 rank 1")
  call expect(all(ens(1, :, :) == ens1), "the ensemble transpose matches the single-context path")
  call expect(hpctrain_destroy(d) == HPCTRAIN_OK, "destroy diffusion")
  call expect(hpctrain_finalize() == HPCTRAIN_OK, "finalize")
  call MPI_Allreduce(MPI_IN_PLACE, failures, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
  call MPI_Finalize(ierr)
  if (failures > 0) error stop 1
  print '(a)', 'all Fortran module checks passed'

contains

  subroutine expect(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      print '(a)', 'FAILED: ' // what // ' (last error: ' // hpctrain_last_error() // ')'
      failures = failures + 1
    end if
  end subroutine

end program test_fortran
