#pragma once

/* The scanning microscopes (confocal, two-photon, ism) over two units: the
 * setup and the chains (airy-modality-scan-setup.c), and the combination of
 * the chains' intensities with the modalities themselves
 * (airy-modality-scan.c, above it). */

#include "airy-geometry.h"
#include "airy-system.h"
#include "airy-stack.h"

G_BEGIN_DECLS

#define AIRY_SCAN_SQRT3 1.7320508075688772935

/* 15 × 15 squares, or 61 hexagons */
#define AIRY_SCAN_MAX_ELEMENTS 225

typedef struct
{
  guint  photons;        /* 1, or 2 (two-photon: the excitation squared) */
  double lambda_ex;      /* µm */
  double lambda_em;      /* the spectrum's first wavelength, µm */
  double lambda_min;     /* its shortest (the detection's highest frequency) */
  double fill;           /* 1/e² radius of the laser over the pupil radius; 0: uniform */
  double pupil_radius;   /* f·NA/n of the source, µm */
  double au;             /* one Airy unit in the image plane, µm: 1.22·λ_em/NA·M */
  double pixel;          /* the image plane's pixel, µm (f_lens·λ_em/(n·N·dx)) */
  double pinhole;        /* diameter in AU; 0: an open detector */
  guint  n_elements;     /* of a detector array; 0: none */
  gboolean hexagonal;    /* hexagonal elements on a honeycomb, else squares */
  double element;        /* an element's width (square side, hexagon across flats), AU */
  double reassignment;   /* the fraction of its offset each element's image moves back */
  double cy[AIRY_SCAN_MAX_ELEMENTS], cx[AIRY_SCAN_MAX_ELEMENTS];  /* their centres, µm */
} AiryScanSetup;

/* What system (in a scanning modality) asks for, checked, with its
 * warnings (may be NULL). */
gboolean _airy_scan_setup          (AirySystem          *system,
                                    AiryScanSetup       *setup,
                                    GPtrArray           *warnings,
                                    GError             **error);
/* the modalities' chains: their number, each as a psf system, and the
 * geometry's (the detection chain's) */
guint       _airy_scan_n_chains     (AirySystem          *system);
AirySystem *_airy_scan_chain_system (AirySystem          *system,
                                     guint                index,
                                     GError             **error);
gboolean    _airy_scan_chain        (AiryGeometry        *geom,
                                     GError             **error);

G_END_DECLS
