/* Helpers of the tests that run a plan's ops by hand (test-ops, test-thick). */
#pragma once

#include "airy-test-util.h"
#include "airy-ops-private.h"

/* The CPU plan of a system's JSON text, failing the test on error. */
static inline AiryPlan *
test_plan_new (const char *json)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (AirySystem) system = test_system (json);
  AiryRunOptions options = { .backend = "cpu" };
  AiryPlan *plan = _airy_plan_new (system, &options, NULL, &error);

  g_assert_no_error (error);
  return plan;
}

/* A field of ones with the plan's input geometry. */
static inline AiryField *
test_plan_field (AiryPlan *plan)
{
  AiryField *field = airy_field_new (plan->spectrum, plan->in_height, plan->in_width, 1.0);
  guint l;

  for (l = 0; l < field->n_lambda; l++)
    {
      field->dy[l] = plan->in_dy[l];
      field->dx[l] = plan->in_dx[l];
    }
  return field;
}
