! In-situ training from Fortran (issue 9, seed 000's shape): a 2-ranks advection-diffusion model
! (advection_diffusion.f90) that every `output_every` steps coarsens each 16x16 patch of its tile
! to a 7-value context and pushes (context, fine patch) pairs into libhpctrain's buffer; the deck
! (downscaler.in) runs a training session every 120 pushes (3840 samples at 2 ranks). At the end
! it samples an ensemble for contexts of a state the model has not seen and prints the RMSE of the
! ensemble mean against the truth and against the coarse baseline (the patch mean), plus the cost
! of a push and of a session next to the simulation step time.
!
! Context of a patch (a documented choice): its mean, then the means of its east, west, north,
! south, north-east and south-west neighbour patches (x periodic in the tile; y across ranks).
! usage: mpirun -np 2 insitu_fortran DECK [output_steps]
program insitu_fortran
  use mpi
  use iso_c_binding, only: c_int64_t
  use hpctrain
  use advection_diffusion
  implicit none
  integer, parameter :: nx = 64, ny = 64, patch = 16, px = nx / patch, py = ny / patch, np = px * py
  integer, parameter :: output_every = 5, members = 8
  type(model_t) :: m
  integer :: ierr, rank, h, rc, step, outputs, n_outputs, sessions, k
  real(8) :: contexts(np, 7), fine(np, patch, patch), ens(np, members, patch * patch)
  real(8) :: loss, last_loss, t0, t_sim, t_push, t_session, sums(3), err_ens, err_base
  logical :: ran
  character(len=256) :: deck, arg
  character(len=32) :: stamp

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call get_command_argument(1, deck)
  n_outputs = 360
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read(arg, *) n_outputs
  end if
  call model_init(m, nx, ny, MPI_COMM_WORLD)
  rc = hpctrain_create("downscaler", trim(deck), MPI_COMM_WORLD, HPCTRAIN_DEVICE_CPU, h)
  call check(rc, "create")
  if (rank == 0) print '(a)', 'libhpctrain ' // hpctrain_version()

  t_sim = 0; t_push = 0; t_session = 0; sessions = 0; last_loss = -1
  do outputs = 1, n_outputs
    t0 = MPI_Wtime()
    do step = 1, output_every
      call model_step(m)
    end do
    t_sim = t_sim + MPI_Wtime() - t0
    call coarsen(m, contexts, fine)
    t0 = MPI_Wtime()
    call check(hpctrain_push(h, contexts, fine), "push")
    t_push = t_push + MPI_Wtime() - t0
    write(stamp, '(a,i2.2,a,i2.2,a,i2.2,a)') '1979-01-', 1 + outputs / 48, ' ', mod(outputs / 2, 24), ':', &
      30 * mod(outputs, 2), ':00'
    t0 = MPI_Wtime()
    call check(hpctrain_train_if_due(h, trim(stamp), ran, loss), "train")
    if (ran) then
      t_session = t_session + MPI_Wtime() - t0
      sessions = sessions + 1
      last_loss = loss
    end if
  end do

  ! A state the model has not seen: a few more steps, then an ensemble per patch.
  do step = 1, 3 * output_every
    call model_step(m)
  end do
  call coarsen(m, contexts, fine)
  call check(hpctrain_sample(h, contexts, 7, ens), "sample")
  sums = 0
  do k = 1, np
    sums(1) = sums(1) + sum((sum(ens(k, :, :), dim=1) / members - reshape(fine(k, :, :), [patch * patch]))**2)
    sums(2) = sums(2) + sum((contexts(k, 1) - fine(k, :, :))**2)
  end do
  sums(3) = np * patch * patch
  call MPI_Allreduce(MPI_IN_PLACE, sums, 3, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  err_ens = sqrt(sums(1) / sums(3))
  err_base = sqrt(sums(2) / sums(3))
  if (rank == 0) then
    print '(a,i0,a,f10.6)', 'sessions: ', sessions, ', last loss ', last_loss
    print '(a,i0,a,i0,a,f9.5,a,f9.5)', 'downscaling RMSE over ', int(sums(3)) / (patch * patch), &
      ' patches, ensemble of ', members, ': ensemble mean ', err_ens, ', coarse baseline ', err_base
    if (err_ens < err_base) then
      print '(a)', 'the ensemble mean beats the coarse baseline'
    else
      print '(a)', 'the ensemble mean does not beat the coarse baseline'
    end if
    print '(a,f9.3,a,f9.3,a,f9.1,a)', 'cost per output step: simulation ', 1d3 * t_sim / n_outputs, &
      ' ms, push ', 1d3 * t_push / n_outputs, ' ms; per session ', 1d3 * t_session / max(sessions, 1), ' ms'
  end if
  call check(hpctrain_destroy(h), "destroy")
  call check(hpctrain_finalize(), "finalize")
  call MPI_Finalize(ierr)

contains

  subroutine check(status, what)
    integer, intent(in) :: status
    character(len=*), intent(in) :: what
    integer :: e
    if (status /= HPCTRAIN_OK) then
      print '(a,i0,a,i0,a)', 'rank ', rank, ': ' // what // ' failed with status ', status, ': ' // &
        hpctrain_last_error()
      call MPI_Abort(MPI_COMM_WORLD, 1, e)
    end if
  end subroutine

  ! Patch means (with a halo row of patch means from the neighbour ranks), then contexts and patches.
  subroutine coarsen(m, contexts, fine)
    type(model_t), intent(in) :: m
    real(8), intent(out) :: contexts(np, 7), fine(np, patch, patch)
    real(8) :: pm(0:px + 1, 0:py + 1)
    integer :: a, b, k, ea, wa
    do b = 1, py
      do a = 1, px
        pm(a, b) = sum(m%u((a - 1) * patch + 1:a * patch, (b - 1) * patch + 1:b * patch)) / patch**2
      end do
    end do
    call exchange_rows(pm, px, py, m%up, m%down, m%comm)
    pm(0, :) = pm(px, :)
    pm(px + 1, :) = pm(1, :)
    k = 0
    do b = 1, py
      do a = 1, px
        k = k + 1
        ea = a + 1
        wa = a - 1
        contexts(k, :) = [pm(a, b), pm(ea, b), pm(wa, b), pm(a, b + 1), pm(a, b - 1), pm(ea, b + 1), pm(wa, b - 1)]
        fine(k, :, :) = m%u((a - 1) * patch + 1:a * patch, (b - 1) * patch + 1:b * patch)
      end do
    end do
  end subroutine

end program insitu_fortran
