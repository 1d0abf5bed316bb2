! A small 2-D advection-diffusion model with forcing, decomposed over MPI ranks in y (each rank a
! tile nx x ny of the periodic domain, one halo row exchanged with each neighbour per step). The
! in-situ example (insitu_fortran.f90) drives it; it knows nothing of the training library.
module advection_diffusion
  use mpi
  implicit none
  private
  public :: model_t, model_init, model_step, exchange_rows

  type :: model_t
    integer :: nx, ny, rank, size, comm, up, down
    real(8) :: t = 0, dt = 0.2d0, kappa = 0.15d0
    real(8), allocatable :: u(:, :), tmp(:, :)   ! u(0:nx+1, 0:ny+1), halos included
  end type

contains

  subroutine model_init(m, nx, ny, comm)
    type(model_t), intent(inout) :: m
    integer, intent(in) :: nx, ny, comm
    integer :: i, j, ierr
    real(8), parameter :: pi = 3.14159265358979d0
    m%nx = nx
    m%ny = ny
    m%comm = comm
    call MPI_Comm_rank(comm, m%rank, ierr)
    call MPI_Comm_size(comm, m%size, ierr)
    m%up = mod(m%rank + 1, m%size)
    m%down = mod(m%rank - 1 + m%size, m%size)
    allocate(m%u(0:nx + 1, 0:ny + 1), m%tmp(0:nx + 1, 0:ny + 1))
    do j = 1, ny
      do i = 1, nx
        m%u(i, j) = sin(2 * pi * i / nx) * cos(2 * pi * (j + m%rank * ny) / (ny * m%size)) &
                    + 0.3d0 * sin(6 * pi * (i + j + m%rank * ny) / nx)
      end do
    end do
  end subroutine

  ! Sends this rank's first and last rows of a(1:n, 1:ny) to its neighbours and receives their
  ! rows into a(:, 0) and a(:, ny + 1) (periodic in y over the ranks).
  subroutine exchange_rows(a, n, ny, up, down, comm)
    integer, intent(in) :: n, ny, up, down, comm
    real(8), intent(inout) :: a(0:n + 1, 0:ny + 1)
    integer :: ierr
    call MPI_Sendrecv(a(1:n, ny), n, MPI_DOUBLE_PRECISION, up, 1, a(1:n, 0), n, MPI_DOUBLE_PRECISION, down, 1, &
                      comm, MPI_STATUS_IGNORE, ierr)
    call MPI_Sendrecv(a(1:n, 1), n, MPI_DOUBLE_PRECISION, down, 2, a(1:n, ny + 1), n, MPI_DOUBLE_PRECISION, up, 2, &
                      comm, MPI_STATUS_IGNORE, ierr)
  end subroutine

  ! One explicit step: upwind advection by a slowly turning wind, diffusion, moving forcing, damping.
  subroutine model_step(m)
    type(model_t), intent(inout) :: m
    integer :: i, j, jg
    real(8) :: cx, cy, adv, dif, force
    real(8), parameter :: pi = 3.14159265358979d0
    m%u(0, :) = m%u(m%nx, :)
    m%u(m%nx + 1, :) = m%u(1, :)
    call exchange_rows(m%u, m%nx, m%ny, m%up, m%down, m%comm)
    cx = 0.6d0 * cos(0.004d0 * m%t)
    cy = 0.6d0 * sin(0.004d0 * m%t)
    do j = 1, m%ny
      jg = j + m%rank * m%ny
      do i = 1, m%nx
        if (cx > 0) then
          adv = cx * (m%u(i, j) - m%u(i - 1, j))
        else
          adv = cx * (m%u(i + 1, j) - m%u(i, j))
        end if
        if (cy > 0) then
          adv = adv + cy * (m%u(i, j) - m%u(i, j - 1))
        else
          adv = adv + cy * (m%u(i, j + 1) - m%u(i, j))
        end if
        dif = m%kappa * (m%u(i + 1, j) + m%u(i - 1, j) + m%u(i, j + 1) + m%u(i, j - 1) - 4 * m%u(i, j))
        force = 0.04d0 * sin(2 * pi * i / 32.0d0 + 0.02d0 * m%t) * cos(2 * pi * jg / 48.0d0 - 0.015d0 * m%t)
        m%tmp(i, j) = m%u(i, j) + m%dt * (dif - adv + force - 0.01d0 * m%u(i, j))
      end do
    end do
    m%u(1:m%nx, 1:m%ny) = m%tmp(1:m%nx, 1:m%ny)
    m%t = m%t + m%dt
  end subroutine

end module advection_diffusion
