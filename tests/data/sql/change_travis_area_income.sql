SELECT b.county_name, b.state_name,
       round(a.v * cpi.f, 0) AS median_household_income_2014_2018,
       round(b.v, 0) AS median_household_income_2019_2023,
       b.v - a.v * cpi.f AS change,
       moe_difference(b.v_moe, a.v_moe * cpi.f) AS change_moe,
       round(100.0 * (b.v - a.v * cpi.f) / NULLIF(a.v * cpi.f, 0), 1) AS pct_change,
       round(moe_pct_change(a.v * cpi.f, b.v, a.v_moe * cpi.f, b.v_moe), 1) AS pct_change_moe
FROM (SELECT g.geo_id, g.county_name, g.state_name, e.estimate AS v, e.margin_error AS v_moe
      FROM public.estimates_by_vintage AS e JOIN public.geography AS g ON g.geo_id = e.geo_id
      WHERE g.geo_id IN ('0500000US48453', '0500000US48491', '0500000US48209', '0500000US48021')
        AND e.variable_code = 'B19013_001E' AND e.vintage = '2014-2018') AS a
JOIN (SELECT g.geo_id, g.county_name, g.state_name, e.estimate AS v, e.margin_error AS v_moe
      FROM public.estimates_by_vintage AS e JOIN public.geography AS g ON g.geo_id = e.geo_id
      WHERE g.geo_id IN ('0500000US48453', '0500000US48491', '0500000US48209', '0500000US48021')
        AND e.variable_code = 'B19013_001E' AND e.vintage = '2019-2023') AS b ON b.geo_id = a.geo_id
CROSS JOIN (SELECT max(c.index) FILTER (WHERE c.year = 2023) / max(c.index) FILTER (WHERE c.year = 2018) AS f
            FROM public.cpi_u_rs AS c) AS cpi
ORDER BY change DESC
