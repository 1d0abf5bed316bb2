! A Fortran program built against an INSTALLED libhpctrain (find_package(hpctrain)): one session.
program consumer
  use mpi
  use hpctrain
  implicit none
  integer :: ierr, h, rc, i
  real(8) :: x(8, 1), y(8, 1), loss
  character(len=*), parameter :: nl = new_line('a')
  call MPI_Init(ierr)
  do i = 1, 8
    x(i, 1) = 0.1d0 * (i - 1)
    y(i, 1) = sin(x(i, 1))
  end do
  rc = hpctrain_create_from_text("consumer", "model mlp" // nl // "hidden_sizes 4" // nl // "batch_size 2" // nl // &
                                 "input_width 1" // nl // "target_width 1" // nl, MPI_COMM_WORLD, &
                                 HPCTRAIN_DEVICE_CPU, h)
  if (rc == HPCTRAIN_OK) rc = hpctrain_push(h, x, y)
  if (rc == HPCTRAIN_OK) rc = hpctrain_train(h, "now", loss)
  if (rc == HPCTRAIN_OK) rc = hpctrain_destroy(h)
  if (rc == HPCTRAIN_OK) rc = hpctrain_finalize()
  if (rc == HPCTRAIN_OK) then
    print '(a,f9.6)', 'consumer (Fortran) ok: loss ', loss
  else
    print '(a)', 'consumer (Fortran) failed: ' // hpctrain_last_error()
  end if
  call MPI_Finalize(ierr)
  if (rc /= HPCTRAIN_OK) error stop 1
end program
